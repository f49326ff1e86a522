package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/syncd-io/syncd/bench"
)

func init() {
	registerCommand("bench", "measure syncd against the emulator and write BENCHMARKS.md", func(m *Main) Command { return &BenchCommand{m: m} })
}

// BenchCommand runs the benchmark scenarios of package bench.
type BenchCommand struct {
	m *Main
}

// Run parses the flags and runs the scenarios.
func (c *BenchCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("bench", "bench [--scenario forward,webhooks,scan,state,mapping] [--rows N] [--rate R] [--events N] [--scan-rows N] [--state-rows N] [--out FILE]")
	scenarios := fs.String("scenario", "forward,webhooks,scan,state,mapping", "comma-separated scenarios: forward, webhooks, scan, state, mapping, edits-logical, edits-poll (PostgreSQL edits to contacts, issue 25), edits-binlog, edits-mysql-poll (MariaDB/MySQL's, issue 34), activities (a call to its activity in each CRM test server, issue 33)")
	activityCalls := fs.Int("activity-calls", 100, "calls of the activities scenario, per CRM")
	rows := fs.Int("rows", 10000, "rows of the forward scenario")
	rate := fs.Float64("rate", 100, "the emulator's rate limit, requests per second (syncd is configured to match)")
	maxRatio := fs.Float64("max-ratio", 1.10, "target for wall time / ideal time of the initial sync")
	events := fs.Int("events", 10000, "webhook events of the webhooks scenario, one per contact (needs PostgreSQL at $SYNCD_BENCH_POSTGRES_URL)")
	scanRows := fs.Int("scan-rows", 1000000, "rows of the unchanged-scan scenario (its state file is measured too)")
	stateRows := fs.Int("state-rows", 20000, "rows of the state scenario's initial sync")
	out := fs.String("out", "BENCHMARKS.md", "write the report here (empty: only print it)")
	goBench := fs.String("go-bench", "", "include this file, the output of `go test -run '^$' -bench . <packages>`, in the report")
	goBenchCmd := fs.String("go-bench-command", "go test -run '^$' -bench . ./mapping ./state ./workspace/signature", "the command that made --go-bench, as the report shows it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	binary, err := os.Executable()
	if err != nil {
		return err
	}
	report := bench.Report{Command: "syncd bench " + shellJoin(args), Started: time.Now(), LoadBefore: bench.LoadAverage()}
	if *goBench != "" {
		b, err := os.ReadFile(*goBench)
		if err != nil {
			return err
		}
		report.GoBench, report.GoBenchCommand = string(b), *goBenchCmd
	}
	for _, s := range strings.Split(*scenarios, ",") {
		dir, err := os.MkdirTemp("", "syncd-bench-")
		if err != nil {
			return err
		}
		var figs []bench.Figure
		switch strings.TrimSpace(s) {
		case "forward":
			figs, err = bench.Forward(ctx, binary, dir, *rows, *rate, *maxRatio)
		case "webhooks":
			figs, err = bench.Webhooks(ctx, binary, dir, *events)
		case "scan":
			figs, err = bench.Scan(ctx, binary, dir, *scanRows)
		case "state":
			figs, err = bench.StateSize(ctx, binary, dir, *stateRows)
		case "mapping":
			figs, err = bench.Mapping()
		case "edits-logical", "edits-poll":
			figs, err = bench.Edits(ctx, binary, dir, 10000, 20*time.Second, "postgres", strings.TrimPrefix(strings.TrimSpace(s), "edits-"))
		case "edits-binlog", "edits-mysql-poll":
			figs, err = bench.Edits(ctx, binary, dir, 10000, 20*time.Second, "mysql", strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "edits-"), "mysql-"))
		case "activities":
			figs, err = activityFigures(ctx, binary, dir, *activityCalls)
		default:
			err = fmt.Errorf("unknown scenario %q (known: forward, webhooks, scan, state, mapping, edits-logical, edits-poll, edits-binlog, edits-mysql-poll, activities)", s)
		}
		os.RemoveAll(dir)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
		report.Figures = append(report.Figures, figs...)
		fmt.Fprintf(c.m.Stderr, "syncd bench: scenario %s done\n", s)
	}
	report.LoadAfter = bench.LoadAverage()
	report.Table(c.m.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		report.Markdown(f)
		if err := f.Close(); err != nil {
			return err
		}
	}
	if report.Failed() {
		return errors.New("some figures missed their targets (marked MISSED)")
	}
	return nil
}

// activityFigures runs the activities scenario for each CRM test
// server, each in a folder of its own under dir.
func activityFigures(ctx context.Context, binary, dir string, calls int) ([]bench.Figure, error) {
	var out []bench.Figure
	for _, crm := range bench.ActivityCRMs {
		sub := filepath.Join(dir, crm)
		if err := os.Mkdir(sub, 0o700); err != nil {
			return nil, err
		}
		figs, err := bench.Activities(ctx, binary, sub, crm, calls)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crm, err)
		}
		out = append(out, figs...)
	}
	return out, nil
}

// shellJoin quotes the arguments that need it for a POSIX shell.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:@%+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
