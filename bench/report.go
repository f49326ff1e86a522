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
