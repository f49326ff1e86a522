package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("matches", "list records held for an ambiguous match, or resolve one", func(m *Main) Command { return &MatchesCommand{m: m} })
}

// MatchesCommand lists held matches (`matches list`) and settles one
// (`matches resolve`).
type MatchesCommand struct {
	m *Main
}

// Run dispatches to list or resolve.
func (c *MatchesCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "resolve") {
		fmt.Fprintln(c.m.Stderr, "Usage: syncd matches list --config FILE [--connector NAME]\n       syncd matches resolve --config FILE --connector NAME --external-id ID (--contact ID | --create)")
		return ErrUsage
	}
	if args[0] == "list" {
		return c.list(args[1:])
	}
	return c.resolve(ctx, args[1:])
}

func (c *MatchesCommand) list(args []string) error {
	fs := c.m.newFlagSet("matches list", "matches list --config FILE [--connector NAME]")
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "only this connector")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	store, err := state.Open(cfg.State.Path, state.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("%w (held matches are read from the state file; with a daemon running, stop it or wait for the admin API)", err)
	}
	defer store.Close()
	total := 0
	for _, cc := range cfg.Connectors {
		if *name != "" && cc.Name != *name {
			continue
		}
		held, err := store.Held(cc.Name)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(held))
		for ext := range held {
			ids = append(ids, ext)
		}
		sort.Strings(ids)
		for _, ext := range ids {
			var h reconcile.Held
			if err := json.Unmarshal(held[ext], &h); err != nil {
				return fmt.Errorf("held record %s/%s: %w", cc.Name, ext, err)
			}
			fmt.Fprintf(c.m.Stdout, "%s\texternalId=%s\tcandidates=%s\t%s\n", cc.Name, ext, strings.Join(h.Candidates, ","), h.Reason)
			total++
		}
	}
	fmt.Fprintf(c.m.Stderr, "%d held record(s); settle one with: syncd matches resolve --connector NAME --external-id ID (--contact ID | --create)\n", total)
	return nil
}

func (c *MatchesCommand) resolve(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("matches resolve", "matches resolve --config FILE --connector NAME --external-id ID (--contact ID | --create)")
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "the held record's connector")
	ext := fs.String("external-id", "", "the held record's externalId")
	contact := fs.String("contact", "", "adopt (or link, per onMatch) this contact")
	create := fs.Bool("create", false, "create a new contact for the record instead")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *ext == "" || (*contact == "") == !*create {
		fs.Usage()
		return errors.New("--connector, --external-id and exactly one of --contact or --create are required")
	}
	cfg, log, err := conf.loadWithLog()
	if err != nil {
		return err
	}
	d, err := daemon.New(ctx, cfg, daemon.Options{Log: log})
	if err != nil {
		return err
	}
	defer d.Close()
	conn, ok := d.Connector(*name)
	if !ok {
		return fmt.Errorf("no connector named %q in %s", *name, conf.path)
	}
	sum, err := conn.Recon.ResolveHeld(ctx, *ext, *contact)
	fmt.Fprintf(c.m.Stdout, "%s: %s\n", *name, sum)
	return err
}
