package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/reconcile"
)

func init() {
	registerCommand("resync", "compare the whole source with the workspace and repair both", func(m *Main) Command { return &ResyncCommand{m: m} })
}

// ResyncCommand is the manual full resync. When a daemon already holds
// the state file, it asks that daemon through its admin address.
type ResyncCommand struct{ m *Main }

// Run parses the flags and resyncs.
func (c *ResyncCommand) Run(ctx context.Context, args []string) error {
	var r resyncAsk
	return c.m.runVerb(ctx, "resync", opVerb{
		usage:  "resync --config FILE [--connector NAME] [--dry-run] [--allow-mass-delete] [--allow-mass-rekey]",
		access: createState,
		flags: func(fs *flag.FlagSet) func([]string) error {
			fs.StringVar(&r.Connector, "connector", "", "resync only this connector")
			fs.BoolVar(&r.DryRun, "dry-run", false, "print the plan (creates, updates with their field diffs, deletes) and change nothing")
			fs.BoolVar(&r.AllowMassDelete, "allow-mass-delete", false, "let the resync delete more than the connector's massDeleteThreshold")
			fs.BoolVar(&r.AllowMassRekey, "allow-mass-rekey", false, "let a resync that looks like a change of the source's ids go on (new records take over the contacts of vanished ones by phone or e-mail)")
			return nil
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			// The plan's lines go above the bars when both are on a terminal.
			// A plan that comes with the daemon's reply is printed after the bars.
			var watch *passWatcher
			r.Watch = func(src passSource, log *logrus.Logger, every time.Duration) func() {
				watch = newWatcher(c.m.Stderr, log, src, every)
				stop := watch.start(ctx)
				return func() { stop(); watch = nil }
			}
			r.Plan = func(e reconcile.PlanEntry) {
				if watch == nil {
					printPlanEntry(c.m.Stdout, e)
					return
				}
				watch.above(func() { printPlanEntry(c.m.Stdout, e) })
			}
			sums, err := resyncer(op).Resync(ctx, r)
			return textFunc(func(w io.Writer) {
				for _, s := range sums {
					fmt.Fprintf(w, "%s %s: %s\n", s.Connector, s.Kind, s)
				}
			}), err
		},
	}, args)
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
