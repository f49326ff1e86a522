package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/admin"
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
	return c.m.runVerbs(ctx, "conflicts", usage, map[string]func() opVerb{"list": func() opVerb { return conflictsList(usage) }}, args)
}

func conflictsList(usage string) opVerb {
	var name *string
	var limit *int
	return opVerb{
		usage: usage,
		json:  "print JSON, one conflict per line",
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "only this connector's conflicts")
			limit = fs.Int("limit", 50, "newest conflicts shown (0: all)")
			return nil
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			cs, err := conflictLister(op).Conflicts(ctx, *name, *limit)
			if err != nil {
				return nil, err
			}
			return lines{vals: each(cs), print: func(w io.Writer) { printConflicts(w, cs) }}, nil
		},
	}
}

// printConflicts prints each conflict, newest first, with the values of
// both sides.
func printConflicts(w io.Writer, cs []admin.Conflict) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "no conflicts")
		return
	}
	for _, cf := range cs {
		fmt.Fprintf(w, "#%d %s %s externalId=%s contact=%s policy=%s winner=%s\n",
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
			fmt.Fprintf(w, "    %s: workspace %q, %s %q\n", k, printable(cf.Workspace[k]), cf.Connector, printable(cf.Source[k]))
		}
	}
}

// printable shows a multi-value canonical value with commas.
func printable(v string) string { return strings.ReplaceAll(v, "\x1f", ", ") }
