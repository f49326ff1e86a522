package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/syncd-io/syncd/admin"
)

func init() {
	registerCommand("matches", "list records held for an ambiguous match, or resolve one", func(m *Main) Command { return &MatchesCommand{m: m} })
}

// MatchesCommand lists held matches (`matches list`) and settles one
// (`matches resolve`): through the running daemon's admin API, or on the
// state file when none runs.
type MatchesCommand struct{ m *Main }

const matchesUsage = "matches list --config FILE [--connector NAME] [--json]\n       syncd matches resolve --config FILE --connector NAME --external-id ID (--contact ID | --create)"

// Run dispatches to list or resolve.
func (c *MatchesCommand) Run(ctx context.Context, args []string) error {
	return c.m.runVerbs(ctx, "matches", matchesUsage, map[string]func() opVerb{
		"list": func() opVerb { return matchesList(c.m.Stderr) }, "resolve": matchesResolve,
	}, args)
}

// matchesList prints one held record per line, and, on notes, how many
// and how to settle one.
func matchesList(notes io.Writer) opVerb {
	var name *string
	return opVerb{
		usage: "matches list --config FILE [--connector NAME] [--json]",
		json:  "print JSON, one held record per line",
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "only this connector")
			return nil
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			hs, err := matchResolver(op).HeldMatches(ctx, *name)
			if err != nil {
				return nil, err
			}
			return lines{vals: each(hs), print: func(w io.Writer) { printHeldMatches(w, notes, hs) }}, nil
		},
	}
}

func printHeldMatches(w, notes io.Writer, hs []admin.HeldMatch) {
	for _, h := range hs {
		fmt.Fprintf(w, "%s\texternalId=%s\tcandidates=%s\t%s\n", h.Connector, h.ExternalID, strings.Join(h.Candidates, ","), h.Reason)
	}
	fmt.Fprintf(notes, "%d held record(s); settle one with: syncd matches resolve --connector NAME --external-id ID (--contact ID | --create)\n", len(hs))
}

// matchesResolve settles one held record.
func matchesResolve() opVerb {
	var name, ext, contact *string
	var create *bool
	return opVerb{
		usage:  "matches resolve --config FILE --connector NAME --external-id ID (--contact ID | --create)",
		access: writeState,
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "the held record's connector")
			ext = fs.String("external-id", "", "the held record's externalId")
			contact = fs.String("contact", "", "adopt (or link, per onMatch) this contact")
			create = fs.Bool("create", false, "create a new contact for the record instead")
			return func(rest []string) error {
				if len(rest) != 0 || *name == "" || *ext == "" || (*contact == "") == !*create {
					fs.Usage()
					return errors.New("--connector, --external-id and exactly one of --contact or --create are required")
				}
				return nil
			}
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			sum, err := matchResolver(op).ResolveHeldMatch(ctx, *name, *ext, *contact)
			return textFunc(func(w io.Writer) { fmt.Fprintf(w, "%s: %s\n", *name, sum) }), err
		},
	}
}
