package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is a set of figures with how they were made.
type Report struct {
	Command string
	Started time.Time
	Figures []Figure
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
	fmt.Fprintf(w, "The daemon is the real binary (`syncd run --once`) in a child process; the workspace is the emulator, served from the bench process on loopback and rate limited like the service. CPU seconds and peak memory are the daemon's own (getrusage of the child).\n\n")
	r.Table(w)
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
