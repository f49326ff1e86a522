package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("resync", "compare the whole source with the workspace and repair both", func(m *Main) Command { return &ResyncCommand{m: m} })
}

// ResyncCommand is the manual full resync. When a daemon already holds
// the state file, it asks that daemon through its admin address.
type ResyncCommand struct {
	m *Main
}

// Run parses the flags and resyncs.
func (c *ResyncCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("resync", "resync --config FILE [--connector NAME] [--dry-run] [--allow-mass-delete] [--allow-mass-rekey]")
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "resync only this connector")
	dryRun := fs.Bool("dry-run", false, "print the plan (creates, updates with their field diffs, deletes) and change nothing")
	allowMassDelete := fs.Bool("allow-mass-delete", false, "let the resync delete more than the connector's massDeleteThreshold")
	allowMassRekey := fs.Bool("allow-mass-rekey", false, "let a resync that looks like a change of the source's ids go on (new records take over the contacts of vanished ones by phone or e-mail)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, log, err := conf.loadWithLog()
	if err != nil {
		return err
	}
	store, err := state.Open(cfg.State.Path, state.Options{Timeout: 500 * time.Millisecond})
	if errors.Is(err, state.ErrLocked) {
		return c.viaDaemon(ctx, cfg, admin.ResyncRequest{Connector: *name, DryRun: *dryRun, AllowMassDelete: *allowMassDelete})
	}
	if err != nil {
		return err
	}
	defer store.Close()
	d, err := daemon.New(ctx, cfg, daemon.Options{Log: log, AllowMassDelete: *allowMassDelete, AllowMassRekey: *allowMassRekey, Store: store, ConfigPath: conf.path})
	if err != nil {
		return err
	}
	defer d.Close()
	watch := newPassWatcher(c.m.Stderr, log, d.Connectors())
	o := reconcile.ResyncOptions{
		DryRun: *dryRun,
		// The plan's lines go above the bar when both are on a terminal.
		Plan: func(e reconcile.PlanEntry) { watch.above(func() { printPlanEntry(c.m.Stdout, e) }) },
	}
	stopWatch := watch.start(ctx)
	sums, err := d.Resync(ctx, *name, o)
	stopWatch()
	for _, s := range sums {
		fmt.Fprintf(c.m.Stdout, "%s %s: %s\n", s.Connector, s.Kind, s)
	}
	return err
}

// viaDaemon asks the running daemon for the resync.
func (c *ResyncCommand) viaDaemon(ctx context.Context, cfg *config.Config, req admin.ResyncRequest) error {
	if cfg.Admin.Listen == "" {
		return fmt.Errorf("the state file %s is held by a running daemon and admin.listen is not set, so it cannot be asked to resync: stop it, or set admin.listen", cfg.State.Path)
	}
	fmt.Fprintf(c.m.Stderr, "syncd: a daemon holds %s; asking it at %s\n", cfg.State.Path, cfg.Admin.Listen)
	cl := &admin.Client{BaseURL: "http://" + cfg.Admin.Listen, Token: cfg.Admin.Token}
	stopWatch := newWatcher(c.m.Stderr, newLogger(c.m, cfg.Log), newRemotePasses(ctx, cl), remoteEvery).start(ctx)
	resp, err := cl.Resync(ctx, req)
	stopWatch()
	for _, e := range resp.Plan {
		printPlanEntry(c.m.Stdout, e)
	}
	for _, s := range resp.Summaries {
		fmt.Fprintf(c.m.Stdout, "%s %s: %s\n", s.Connector, s.Kind, s)
	}
	return err
}

// printPlanEntry prints one write of a resync plan.
func printPlanEntry(w io.Writer, e reconcile.PlanEntry) {
	switch e.Action {
	case "update":
		diffs := make([]string, len(e.Changes))
		for i, ch := range e.Changes {
			diffs[i] = fmt.Sprintf("%s: %q -> %q", ch.Field, ch.Old, ch.New)
		}
		fmt.Fprintf(w, "update externalId=%s contact=%s  %s\n", e.ExternalID, e.ContactID, strings.Join(diffs, "; "))
	case "create":
		fmt.Fprintf(w, "create externalId=%s\n", e.ExternalID)
	default:
		fmt.Fprintf(w, "%s externalId=%s contact=%s\n", e.Action, e.ExternalID, e.ContactID)
	}
}
