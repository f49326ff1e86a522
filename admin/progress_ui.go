package admin

import (
	"context"
	"html/template"
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
		rp := runningPass{Name: c.Name, P: p, Value: p.Done, Text: p.String()}
		if p.Total != nil {
			rp.HasTotal, rp.Max = true, max(*p.Total, 1)
		}
		out = append(out, rp)
	}
	return out
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
