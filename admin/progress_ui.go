package admin

import (
	"context"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/syncd-io/syncd/progress"
)

// chartSpan is how far back the health page's charts go.
const chartSpan = 24 * time.Hour

// runningPass is one running pass as the health page shows it.
type runningPass struct {
	Name     string
	P        progress.Snapshot
	HasTotal bool
	Max      int64
	Value    int64
	Text     string
}

// pageCharts are the health page's charts, rendered.
type pageCharts struct {
	APICalls, Passes, Problems template.HTML
	Quota                      string
}

// runningPasses lists the passes in progress, in connector order.
func runningPasses(st Status) []runningPass {
	var out []runningPass
	for _, c := range st.Connectors {
		if c.Progress == nil {
			continue
		}
		p := *c.Progress
		rp := runningPass{Name: c.Name, P: p, Value: p.Done, Text: progressText(p)}
		if p.Total != nil {
			rp.HasTotal, rp.Max = true, max(*p.Total, 1)
		}
		out = append(out, rp)
	}
	return out
}

// progressText is one line of figures: done of total, rate, time left,
// writes by kind, API calls.
func progressText(p progress.Snapshot) string {
	var parts []string
	switch {
	case p.Total == nil:
		parts = append(parts, thousands(p.Done)+" records, total unknown")
	default:
		about := ""
		if p.TotalIsEstimate {
			about = "about "
		}
		f, _ := p.Fraction()
		parts = append(parts, fmt.Sprintf("%s of %s%s records (%d%%)", thousands(p.Done), about, thousands(*p.Total), int(f*100)))
	}
	parts = append(parts, fmt.Sprintf("%.1f records/s", p.RatePerSecond))
	if eta, ok := p.ETA(); ok {
		parts = append(parts, "about "+eta.Round(time.Second).String()+" left")
	} else {
		parts = append(parts, "time left unknown")
	}
	if w := writesText(p.Writes); w != "" {
		parts = append(parts, w)
	}
	parts = append(parts, thousands(p.APICalls)+" API calls")
	return strings.Join(parts, " · ")
}

// writesText lists the writes by kind in a fixed order: "created 12,
// updated 3".
func writesText(w map[string]int64) string {
	var parts []string
	for _, k := range []string{"created", "updated", "adopted", "deleted", "unlinked", "held", "failed", "unchanged"} {
		if n := w[k]; n > 0 {
			parts = append(parts, k+" "+thousands(n))
		}
	}
	return strings.Join(parts, ", ")
}

// charts renders the charts of the last chartSpan, when the daemon keeps
// a history.
func (s *Server) charts(ctx context.Context, now time.Time) (*pageCharts, error) {
	hr, ok := s.Daemon.(HistoryReader)
	if !ok {
		return nil, nil
	}
	h, err := hr.History(ctx, now.Add(-chartSpan))
	if err != nil {
		return nil, err
	}
	return &pageCharts{
		APICalls: apiCallsChart(h, now),
		Passes:   passesChart(h),
		Problems: problemsChart(h, now),
		Quota:    thousands(int64(h.QuotaPerMinute)),
	}, nil
}
