package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("conflicts", "list the conflicts the conflict policy settled", func(m *Main) Command { return &ConflictsCommand{m: m} })
}

// ConflictsCommand shows the conflict journal: contacts both sides
// changed since the last sync, the policy's winner and the losing values.
type ConflictsCommand struct {
	m *Main
}

// Run parses the flags and lists.
func (c *ConflictsCommand) Run(ctx context.Context, args []string) error {
	const usage = "conflicts list --config FILE [--connector NAME] [--limit N] [--json]"
	if len(args) == 0 || args[0] != "list" {
		fmt.Fprintf(c.m.Stderr, "Usage: syncd %s\n", usage)
		return ErrUsage
	}
	fs := c.m.newFlagSet("conflicts list", usage)
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "only this connector's conflicts")
	limit := fs.Int("limit", 50, "newest conflicts shown (0: all)")
	asJSON := fs.Bool("json", false, "print JSON, one conflict per line")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	cs, err := c.conflicts(ctx, cfg, *name, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		for _, cf := range cs {
			if err := enc.Encode(struct {
				ID uint64 `json:"id"`
				state.Conflict
			}{cf.ID, cf}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(cs) == 0 {
		fmt.Fprintln(c.m.Stdout, "no conflicts")
		return nil
	}
	for _, cf := range cs {
		fmt.Fprintf(c.m.Stdout, "#%d %s %s externalId=%s contact=%s policy=%s winner=%s\n",
			cf.ID, cf.At.Format(time.RFC3339), cf.Connector, cf.ExternalID, cf.ContactID, cf.Policy, cf.Winner)
		fields := map[string]bool{}
		for k := range cf.Workspace {
			fields[k] = true
		}
		for k := range cf.Source {
			fields[k] = true
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(c.m.Stdout, "    %s: workspace %q, %s %q\n", k, printable(cf.Workspace[k]), cf.Connector, printable(cf.Source[k]))
		}
	}
	return nil
}

// conflicts reads the journal from the state file, or through the running
// daemon's admin API when it holds the file.
func (c *ConflictsCommand) conflicts(ctx context.Context, cfg *config.Config, name string, limit int) ([]state.Conflict, error) {
	st, err := state.Open(cfg.State.Path, state.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
	if errors.Is(err, state.ErrLocked) {
		if cfg.Admin.Listen == "" {
			return nil, fmt.Errorf("a running syncd holds the state file %s and admin.listen is not set, so it cannot be asked: %w", cfg.State.Path, err)
		}
		got, err := admin.NewClient(cfg.Admin.Listen, cfg.Admin.Token).Conflicts(ctx, name, limit)
		if err != nil {
			return nil, fmt.Errorf("ask the running daemon at %s: %w", cfg.Admin.Listen, err)
		}
		out := make([]state.Conflict, len(got))
		for i, g := range got {
			out[i] = g.Conflict
			out[i].ID = g.ID
		}
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Conflicts(name, limit)
}

// printable shows a multi-value canonical value with commas.
func printable(v string) string { return strings.ReplaceAll(v, "\x1f", ", ") }
