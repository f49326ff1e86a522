package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syncd-io/syncd/admin"
)

func init() {
	registerCommand("deadletters", "list, retry or drop the records set aside after failing", func(m *Main) Command { return &DeadLettersCommand{m: m} })
}

// DeadLettersCommand lists, retries and drops dead letters: through the
// running daemon's admin API, or on the state file when none runs.
type DeadLettersCommand struct{ m *Main }

const deadLettersUsage = "deadletters list|retry ID|drop ID --config FILE [--connector NAME] [--json]"

// Run dispatches list, retry and drop.
func (c *DeadLettersCommand) Run(ctx context.Context, args []string) error {
	return c.m.runVerbs(ctx, "deadletters", deadLettersUsage, map[string]func() opVerb{
		"list": deadLettersList, "retry": deadLetterRetry, "drop": deadLetterDrop,
	}, args)
}

// deadLettersList prints the dead letters, then the field warnings
// (records that synced without a value that did not map). With --json,
// one dead letter per line, then one {"fieldWarning": ...} per line.
func deadLettersList() opVerb {
	var name *string
	return opVerb{
		usage: deadLettersUsage,
		json:  "print JSON, one dead letter per line",
		flags: func(fs *flag.FlagSet) func([]string) error {
			name = fs.String("connector", "", "only this connector's dead letters")
			return nil
		},
		ask: func(ctx context.Context, op operator) (reply, error) {
			return listDeadLetters(ctx, op, *name)
		},
	}
}

func listDeadLetters(ctx context.Context, op deadLetterLister, name string) (reply, error) {
	dls, err := op.DeadLetters(ctx, name)
	if err != nil {
		return nil, err
	}
	fws, err := op.FieldWarnings(ctx, name)
	if err != nil {
		return nil, err
	}
	vals := each(dls)
	for _, w := range fws {
		vals = append(vals, struct {
			FieldWarning admin.FieldWarning `json:"fieldWarning"`
		}{w})
	}
	return lines{vals: vals, print: func(w io.Writer) {
		now := time.Now()
		printDeadLetters(w, dls, now)
		printFieldWarnings(w, fws, now)
	}}, nil
}

// deadLetterID is the check of the one dead letter ID retry and drop take.
func deadLetterID(fs *flag.FlagSet, action string, id *uint64) func([]string) error {
	return func(rest []string) error {
		if len(rest) != 1 {
			fs.Usage()
			return fmt.Errorf("%s takes one dead letter ID: %w", action, ErrUsage)
		}
		var err error
		if *id, err = strconv.ParseUint(strings.TrimPrefix(rest[0], "#"), 10, 64); err != nil || *id == 0 {
			return fmt.Errorf("dead letter ID %q: want a positive number, as `syncd deadletters list` shows: %w", rest[0], ErrUsage)
		}
		return nil
	}
}

// deadLetterRetry runs a dead letter's record through its connector now.
func deadLetterRetry() opVerb {
	var id uint64
	return opVerb{
		usage:  deadLettersUsage,
		access: writeState,
		flags:  func(fs *flag.FlagSet) func([]string) error { return deadLetterID(fs, "retry", &id) },
		ask: func(ctx context.Context, op operator) (reply, error) {
			res, err := deadLetterSettler(op).RetryDeadLetter(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("retry dead letter %d: %w", id, err)
			}
			if !res.Resolved {
				return nil, fmt.Errorf("dead letter %d failed again; `syncd deadletters list` shows the new reason", id)
			}
			return textFunc(func(w io.Writer) {
				if res.Summary.Kind == "" { // an activity's: no pass ran
					fmt.Fprintf(w, "dead letter %d: the call or text went through\n", id)
					return
				}
				fmt.Fprintf(w, "dead letter %d: the record went through (%s)\n", id, res.Summary)
			}), nil
		},
	}
}

// deadLetterDrop forgets a dead letter.
func deadLetterDrop() opVerb {
	var id uint64
	return opVerb{
		usage:  deadLettersUsage,
		access: writeState,
		flags:  func(fs *flag.FlagSet) func([]string) error { return deadLetterID(fs, "drop", &id) },
		ask: func(ctx context.Context, op operator) (reply, error) {
			if err := deadLetterSettler(op).DropDeadLetter(ctx, id); err != nil {
				return nil, fmt.Errorf("drop dead letter %d: %w", id, err)
			}
			return textFunc(func(w io.Writer) { fmt.Fprintf(w, "dead letter %d dropped\n", id) }), nil
		},
	}
}

// printFieldWarnings prints one field warning per line, the reason last;
// nothing when there is none.
func printFieldWarnings(w io.Writer, fws []admin.FieldWarning, now time.Time) {
	if len(fws) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d field warnings: these records synced without the value shown; fix it at the source (syncd never writes over it)\n", len(fws))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONNECTOR\tKEY\tFIELD\tFROM\tVALUE\tSINCE\tREASON")
	for _, f := range fws {
		reason := strings.Join(strings.Fields(f.Reason), " ")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%q\t%s\t%s\n", f.Connector, f.Key, f.Field, f.From, f.Value, ago(now, f.CreatedAt), reason)
	}
	tw.Flush()
}

// printDeadLetters prints one dead letter per line, the reason last.
func printDeadLetters(w io.Writer, dls []admin.DeadLetter, now time.Time) {
	if len(dls) == 0 {
		fmt.Fprintln(w, "no dead letters")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCONNECTOR\tOPERATION\tKEY\tATTEMPTS\tLAST FAILURE\tNEXT TRY\tREASON")
	for _, d := range dls {
		next := "on change or retry"
		if !d.NextTry.IsZero() {
			next = d.NextTry.Local().Format(time.RFC3339)
		}
		reason := strings.Join(strings.Fields(d.Reason), " ") // one line
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.ID, d.Connector, d.Operation, d.Key, d.Attempts, ago(now, d.UpdatedAt), next, reason)
	}
	tw.Flush()
}
