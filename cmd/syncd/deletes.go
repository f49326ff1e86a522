package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	return c.m.runVerbs(ctx, "deletes", deletesUsage, map[string]func() opVerb{
		"list": deletesList, "approve": func() opVerb { return deletesSettle("approve") }, "drop": func() opVerb { return deletesSettle("drop") },
	}, args)
}

func deletesList() opVerb {
	var name *string
	return opVerb{
		usage: deletesUsage,
		json:  "print JSON, one held deletion per line",
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "only this connector's held deletions")
			return nil
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			hs, err := heldDeleteSettler(op).HeldDeletes(ctx, *name)
			if err != nil {
				return nil, err
			}
			return lines{vals: each(hs), print: func(w io.Writer) { printHeldDeletes(w, hs, time.Now()) }}, nil
		},
	}
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

// deletesSettle approves or drops a connector's held deletions.
func deletesSettle(action string) opVerb {
	var name *string
	return opVerb{
		usage:  deletesUsage,
		access: writeState,
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "the connector whose held deletions are "+map[string]string{"approve": "approved", "drop": "dropped"}[action])
			return func(rest []string) error {
				switch {
				case len(rest) != 0:
					fs.Usage()
					return fmt.Errorf("%s takes no arguments: %w", action, ErrUsage)
				case *name == "":
					fs.Usage()
					return fmt.Errorf("%s needs --connector: the held deletions of one connector are approved or dropped together: %w", action, ErrUsage)
				}
				return nil
			}
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			n, err := heldDeleteSettler(op).SettleHeldDeletes(ctx, *name, action)
			if err != nil {
				return nil, fmt.Errorf("%s held deletions of %s: %w", action, *name, err)
			}
			return textFunc(func(w io.Writer) {
				if action == "approve" {
					fmt.Fprintf(w, "%s: %d held record deletions approved: the records are deleted\n", *name, n)
				} else {
					fmt.Fprintf(w, "%s: %d held record deletions dropped: the records stay; a resync brings their contacts back\n", *name, n)
				}
			}), nil
		},
	}
}
