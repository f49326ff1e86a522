package daemon

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/state"
)

// historyEvery is how often the daemon adds a point to the history the
// health page charts (state.AddHistory keeps one point a minute).
const historyEvery = time.Minute

// chartPasses bounds the passes the health page charts.
const chartPasses = 60

// history samples, into the state file, the workspace calls made and the
// dead letters and conflicts held: every minute while the daemon is open,
// after each pass, and when it closes.
type history struct {
	d         *Daemon
	throttled atomic.Int64 // 429 answers, counted by ops.observe

	mu            sync.Mutex
	lastCalls     int64
	lastThrottled int64

	stop context.CancelFunc
	done chan struct{}
}

func (d *Daemon) startHistory() {
	ctx, cancel := context.WithCancel(context.Background())
	h := &history{d: d, stop: cancel, done: make(chan struct{}), lastCalls: d.ws.Calls()}
	d.ops.history = h
	h.sample() // where the charts start
	go func() {
		defer close(h.done)
		t := time.NewTicker(historyEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
}

// stopHistory ends the sampling and records what is left.
func (h *history) close() {
	if h == nil {
		return
	}
	h.stop()
	<-h.done
	h.sample()
}

// sample adds the calls made since the last sample, and the totals held
// now, to the current minute's point.
func (h *history) sample() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p, calls, throttled, err := h.current()
	if err != nil {
		h.d.log.WithError(err).Warn("history point not recorded: state unreadable")
		return
	}
	if err := h.d.store.AddHistory(p); err != nil {
		h.d.log.WithError(err).Warn("history point not recorded")
		return
	}
	h.lastCalls, h.lastThrottled = calls, throttled
}

// current is the point a sample would add now, with the counters it
// read. The caller holds h.mu.
func (h *history) current() (p state.HistoryPoint, calls, throttled int64, err error) {
	d := h.d
	calls, throttled = d.ws.Calls(), h.throttled.Load()
	p = state.HistoryPoint{Minute: time.Now().UTC().Truncate(time.Minute), APICalls: calls - h.lastCalls, Throttled: throttled - h.lastThrottled}
	names := make([]string, len(d.connectors))
	for i, c := range d.connectors {
		names[i] = c.Name
	}
	g, err := stateGauges(d.store, names)
	for _, c := range g.Connectors {
		p.DeadLetters += c.DeadLetters
		p.Conflicts += c.Conflicts
	}
	return p, calls, throttled, err
}

// withCurrent adds what was not sampled yet to points, as the point of
// the current minute, so that the charts are up to date however recent
// the last sample is.
func (h *history) withCurrent(points []state.HistoryPoint) ([]state.HistoryPoint, error) {
	h.mu.Lock()
	p, _, _, err := h.current()
	h.mu.Unlock()
	if err != nil {
		return points, err
	}
	if n := len(points); n > 0 && points[n-1].Minute.Equal(p.Minute) {
		last := &points[n-1]
		last.APICalls += p.APICalls
		last.Throttled += p.Throttled
		last.DeadLetters, last.Conflicts = p.DeadLetters, p.Conflicts
		return points, nil
	}
	return append(points, p), nil
}

// History returns what the health page charts: the points of the minutes
// from since on, the finished passes of every connector that started
// since (oldest first, the newest chartPasses), and the API quota.
func (d *Daemon) History(ctx context.Context, since time.Time) (admin.History, error) {
	out := admin.History{Since: since, QuotaPerMinute: d.cfg.Workspace.RateLimit * 60}
	var err error
	if out.Minutes, err = d.store.History(since); err != nil {
		return out, err
	}
	if d.ops.history != nil {
		if out.Minutes, err = d.ops.history.withCurrent(out.Minutes); err != nil {
			return out, err
		}
	}
	for _, c := range d.connectors {
		runs, err := d.store.Runs(c.Name, chartPasses)
		if err != nil {
			return out, err
		}
		for _, r := range runs {
			if !r.FinishedAt.IsZero() && !r.StartedAt.Before(since) && r.Kind != "retry" {
				out.Passes = append(out.Passes, admin.Run{ID: r.ID, Run: r})
			}
		}
	}
	slices.SortFunc(out.Passes, func(a, b admin.Run) int { return a.StartedAt.Compare(b.StartedAt) })
	if n := len(out.Passes); n > chartPasses {
		out.Passes = out.Passes[n-chartPasses:]
	}
	return out, nil
}
