package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
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
	if len(args) == 0 || (args[0] != "list" && args[0] != "retry" && args[0] != "drop") {
		fmt.Fprintf(c.m.Stderr, "Usage: syncd %s\n", deadLettersUsage)
		return ErrUsage
	}
	action := args[0]
	fs := c.m.newFlagSet("deadletters "+action, deadLettersUsage)
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "list: only this connector's dead letters")
	asJSON := fs.Bool("json", false, "list: print JSON, one dead letter per line")
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	var id uint64
	switch {
	case action == "list" && len(rest) != 0:
		fs.Usage()
		return fmt.Errorf("list takes no arguments: %w", ErrUsage)
	case action != "list":
		if len(rest) != 1 {
			fs.Usage()
			return fmt.Errorf("%s takes one dead letter ID: %w", action, ErrUsage)
		}
		if id, err = strconv.ParseUint(strings.TrimPrefix(rest[0], "#"), 10, 64); err != nil || id == 0 {
			return fmt.Errorf("dead letter ID %q: want a positive number, as `syncd deadletters list` shows: %w", rest[0], ErrUsage)
		}
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	switch action {
	case "list":
		return c.list(ctx, cfg, *name, *asJSON)
	case "retry":
		return c.retry(ctx, cfg, id)
	default:
		return c.drop(ctx, cfg, id)
	}
}

// list prints the dead letters, then the field warnings (records that
// synced without a value that did not map). With --json, one dead letter
// per line, then one {"fieldWarning": ...} per line.
func (c *DeadLettersCommand) list(ctx context.Context, cfg *config.Config, name string, asJSON bool) error {
	st, cl, err := openStateOrDaemon(cfg, true)
	if err != nil {
		return err
	}
	var dls []admin.DeadLetter
	var fws []admin.FieldWarning
	if st != nil {
		dls, err = daemon.ListDeadLetters(st, name)
		if err == nil {
			fws, err = daemon.ListFieldWarnings(st, name)
		}
		st.Close()
	} else {
		dls, err = cl.DeadLetters(ctx, name)
		if err == nil {
			fws, err = cl.FieldWarnings(ctx, name)
		}
	}
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(c.m.Stdout)
		for _, d := range dls {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		for _, w := range fws {
			if err := enc.Encode(struct {
				FieldWarning admin.FieldWarning `json:"fieldWarning"`
			}{w}); err != nil {
				return err
			}
		}
		return nil
	}
	now := time.Now()
	printDeadLetters(c.m.Stdout, dls, now)
	printFieldWarnings(c.m.Stdout, fws, now)
	return nil
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

func (c *DeadLettersCommand) retry(ctx context.Context, cfg *config.Config, id uint64) error {
	st, cl, err := openStateOrDaemon(cfg, false)
	if err != nil {
		return err
	}
	var res admin.RetryResponse
	if st != nil {
		// No daemon runs: retry here, with the connector opened as the
		// daemon would.
		defer st.Close()
		d, derr := daemon.New(ctx, cfg, daemon.Options{Log: newLogger(c.m, cfg.Log), Store: st, Version: Version})
		if derr != nil {
			return derr
		}
		defer d.Close()
		res, err = d.RetryDeadLetter(ctx, id)
	} else {
		res, err = cl.RetryDeadLetter(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("retry dead letter %d: %w", id, err)
	}
	if res.Resolved {
		fmt.Fprintf(c.m.Stdout, "dead letter %d: the record went through (%s)\n", id, res.Summary)
		return nil
	}
	return fmt.Errorf("dead letter %d failed again; `syncd deadletters list` shows the new reason", id)
}

func (c *DeadLettersCommand) drop(ctx context.Context, cfg *config.Config, id uint64) error {
	st, cl, err := openStateOrDaemon(cfg, false)
	if err != nil {
		return err
	}
	if st != nil {
		err = st.DeleteDeadLetter(id)
		st.Close()
	} else {
		err = cl.DropDeadLetter(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("drop dead letter %d: %w", id, err)
	}
	fmt.Fprintf(c.m.Stdout, "dead letter %d dropped\n", id)
	return nil
}
