package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Report is a set of figures with how they were made.
type Report struct {
	Command string
	Started time.Time
	Figures []Figure
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 minutes) when the scenarios started and ended: wall-time ratios
	// hold only on a quiet machine.
	LoadBefore, LoadAfter string
	// GoBench is the output of `go test -bench` for the hot paths, when
	// given (syncd bench --go-bench FILE).
	GoBench, GoBenchCommand string
}

// LoadAverage returns the 1, 5 and 15 minute load averages of the
// machine ("" when unknown).
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Failed reports whether any figure missed its target.
func (r Report) Failed() bool {
	for _, f := range r.Figures {
		if !f.OK {
			return true
		}
	}
	return false
}

// Markdown writes the report as BENCHMARKS.md.
func (r Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# syncd benchmarks\n\nMade by `%s` on %s.\n\nMachine: %s.\n\n", r.Command, r.Started.UTC().Format("2006-01-02"), Machine())
	if r.LoadBefore != "" {
		fmt.Fprintf(w, "Load average (1, 5, 15 min) when the scenarios started: %s; when they ended: %s.\n\n", r.LoadBefore, r.LoadAfter)
	}
	fmt.Fprintf(w, "The daemon is the real binary (`syncd run --once`, or `syncd run` for the webhooks scenario) in a child process; "+
		"the workspace is the emulator, served from the bench process on loopback and rate limited like the service. "+
		"CPU seconds and peak memory are the daemon's own (getrusage of the child; anonymous memory sampled from /proc, "+
		"as RSS also counts the pages of the state file that bbolt maps). "+
		"In the webhooks scenario, each event is timed from the moment its sender reads the receiver's 2xx to the moment "+
		"a LISTEN connection of the bench process receives the NOTIFY that a trigger on the table sends, which PostgreSQL "+
		"delivers when the UPDATE commits: both instants are read from the bench process's clock.\n\n")
	fmt.Fprintf(w, "The scan scenario seeds the links as the pass that wrote them would have (with the raw records' fingerprints), "+
		"so that the pass measured is a scheduled pass over unchanged rows: each row is read, fingerprinted and compared with "+
		"its link, and nothing else is done; memory grows by the repeated-ID check and the set of rows seen (about 4 bytes a row each, "+
		"outside the Go heap). The state file is measured after that pass (1,000,000 links) and after an initial sync by the daemon "+
		"(one transaction per created contact, as in production): file size divided by links. The mapping scenario runs "+
		"BenchmarkToContactAndHash in the bench process (testing.Benchmark); its CPU time per record holds on a busy machine, "+
		"where the wall time does not. The webhooks scenario sends a burst as fast as %d senders go, then, once every row of "+
		"the burst has committed, a steady stream of one event per contact at a fixed rate.\n\n", Senders)
	r.Table(w)
	if r.GoBench != "" {
		fmt.Fprintf(w, "\n## Hot paths (Go benchmarks)\n\n`%s`\n\n```\n%s\n```\n", r.GoBenchCommand, strings.TrimSpace(r.GoBench))
	}
}

// Table writes the figures as a Markdown table.
func (r Report) Table(w io.Writer) {
	fmt.Fprintln(w, "| scenario | figure | value | target | |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, f := range r.Figures {
		mark := "ok"
		if !f.OK {
			mark = "MISSED"
		}
		if f.Target == "" {
			mark = ""
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", esc(f.Scenario), esc(f.Metric), esc(f.Value), esc(f.Target), mark)
	}
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
