package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("deletes", "list, approve or drop the record deletions the write-back's mass-delete guard held", func(m *Main) Command { return &DeletesCommand{m: m} })
}

// DeletesCommand lists, approves and drops the record deletions held by
// the write-back's mass-delete guard (contacts deleted in the workspace
// over a connector's massDeleteThreshold): through the running daemon's
// admin API, or on the state file when none runs.
type DeletesCommand struct{ m *Main }

const deletesUsage = "deletes list|approve|drop --config FILE [--connector NAME] [--json]"

// Run dispatches list, approve and drop.
func (c *DeletesCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "approve" && args[0] != "drop") {
		fmt.Fprintf(c.m.Stderr, "Usage: syncd %s\n", deletesUsage)
		return ErrUsage
	}
	action := args[0]
	fs := c.m.newFlagSet("deletes "+action, deletesUsage)
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "the connector (required for approve and drop; list: only its held deletions)")
	asJSON := fs.Bool("json", false, "list: print JSON, one held deletion per line")
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case len(rest) != 0:
		fs.Usage()
		return fmt.Errorf("%s takes no arguments: %w", action, ErrUsage)
	case action != "list" && *name == "":
		fs.Usage()
		return fmt.Errorf("%s needs --connector: the held deletions of one connector are approved or dropped together: %w", action, ErrUsage)
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	if action == "list" {
		return c.list(ctx, cfg, *name, *asJSON)
	}
	return c.settle(ctx, cfg, *name, action)
}

func (c *DeletesCommand) list(ctx context.Context, cfg *config.Config, name string, asJSON bool) error {
	st, cl, err := openStateOrDaemon(cfg, true)
	if err != nil {
		return err
	}
	var hs []state.HeldDelete
	if st != nil {
		hs, err = heldOnFile(st, cfg, name)
		st.Close()
	} else {
		hs, err = cl.HeldDeletes(ctx, name)
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		for _, h := range hs {
			if err := enc.Encode(h); err != nil {
				return err
			}
		}
		return nil
	}
	printHeldDeletes(c.m.Stdout, hs, time.Now())
	return nil
}

// heldOnFile lists the held deletions of the configured connectors (or of
// one) from the state file.
func heldOnFile(st *state.Store, cfg *config.Config, name string) ([]state.HeldDelete, error) {
	var out []state.HeldDelete
	found := name == ""
	for _, cc := range cfg.Connectors {
		if name != "" && cc.Name != name {
			continue
		}
		found = true
		hs, err := st.HeldDeletes(cc.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	if !found {
		return nil, fmt.Errorf("no connector %q in the configuration", name)
	}
	return out, nil
}

// printHeldDeletes prints one held deletion per line, and how to settle
// them.
func printHeldDeletes(w io.Writer, hs []state.HeldDelete, now time.Time) {
	if len(hs) == 0 {
		fmt.Fprintln(w, "no held deletions")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONNECTOR\tEXTERNAL ID\tRECORD\tCONTACT (deleted)\tHELD")
	count := map[string]int{}
	var order []string
	for _, h := range hs {
		if count[h.Connector] == 0 {
			order = append(order, h.Connector)
		}
		count[h.Connector]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Connector, h.ExternalID, h.RecordID, h.ContactID, ago(now, h.HeldAt))
	}
	tw.Flush()
	for _, conn := range order {
		fmt.Fprintf(w, "%s: %d record deletions held. Approve (delete the records): syncd deletes approve --connector %s; drop (keep them): syncd deletes drop --connector %s\n",
			conn, count[conn], conn, conn)
	}
}

func (c *DeletesCommand) settle(ctx context.Context, cfg *config.Config, name, action string) error {
	st, cl, err := openStateOrDaemon(cfg, false)
	if err != nil {
		return err
	}
	var n int
	if st != nil {
		// No daemon runs: settle here, with the connector opened as the
		// daemon would.
		defer st.Close()
		d, derr := daemon.New(ctx, cfg, daemon.Options{Log: newLogger(c.m, cfg.Log), Store: st, Version: Version})
		if derr != nil {
			return derr
		}
		defer d.Close()
		if action == "approve" {
			n, err = d.ApproveHeldDeletes(ctx, name)
		} else {
			n, err = d.DropHeldDeletes(name)
		}
	} else {
		res, serr := cl.SettleHeldDeletes(ctx, name, action)
		n, err = res.Approved+res.Dropped, serr
	}
	if err != nil {
		return fmt.Errorf("%s held deletions of %s: %w", action, name, err)
	}
	if action == "approve" {
		fmt.Fprintf(c.m.Stdout, "%s: %d held record deletions approved: the records are deleted\n", name, n)
	} else {
		fmt.Fprintf(c.m.Stdout, "%s: %d held record deletions dropped: the records stay; a resync brings their contacts back\n", name, n)
	}
	return nil
}
