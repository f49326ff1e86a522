package daemon

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/state"
)

// historyEvery is how often the daemon adds its counts to the history the
// health page charts (state.History.Add keeps one point a minute).
const historyEvery = time.Minute

// chartPasses bounds the passes the health page charts.
const chartPasses = 60

// history counts the workspace calls of each minute as they are made, and
// writes them, with the dead letters and conflicts held, into the state
// file: every minute while the daemon is open, after each pass, and when
// it closes.
type history struct {
	d   *Daemon
	now func() time.Time

	mu      sync.Mutex
	pending map[int64]state.HistoryPoint // calls not yet written, by Unix minute

	stop context.CancelFunc
	done chan struct{}
}

func (d *Daemon) startHistory() {
	ctx, cancel := context.WithCancel(context.Background())
	h := &history{d: d, now: time.Now, pending: map[int64]state.HistoryPoint{}, stop: cancel, done: make(chan struct{})}
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

// call counts one workspace call in the minute it was made.
func (h *history) call(status int) {
	if h == nil {
		return
	}
	m := h.now().UTC().Truncate(time.Minute)
	h.mu.Lock()
	p := h.pending[m.Unix()]
	p.Minute = m
	p.APICalls++
	if status == 429 {
		p.Throttled++
	}
	h.pending[m.Unix()] = p
	h.mu.Unlock()
}

// close ends the sampling and records what is left.
func (h *history) close() {
	if h == nil {
		return
	}
	h.stop()
	<-h.done
	h.sample()
}

// sample writes the calls counted since the last sample, and the totals
// held now as the current minute's.
func (h *history) sample() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	points, err := h.unwritten()
	if err != nil {
		h.d.log.WithError(err).Warn("history point not recorded: state unreadable")
		return
	}
	if err := h.d.store.History.Add(points...); err != nil {
		h.d.log.WithError(err).Warn("history point not recorded")
		return
	}
	clear(h.pending)
}

// unwritten is what a sample would write now: the pending minutes, oldest
// first, the last of them (the current minute) with the totals held now.
// The caller holds h.mu.
func (h *history) unwritten() ([]state.HistoryPoint, error) {
	now := h.now().UTC().Truncate(time.Minute)
	cur := h.pending[now.Unix()]
	cur.Minute = now
	names := make([]string, len(h.d.connectors))
	for i, c := range h.d.connectors {
		names[i] = c.Name
	}
	g, err := stateGauges(h.d.store, names, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range g.Connectors {
		cur.DeadLetters += c.DeadLetters
		cur.Conflicts += c.Conflicts
	}
	var out []state.HistoryPoint
	for _, k := range slices.Sorted(maps.Keys(h.pending)) {
		if k != now.Unix() {
			// An earlier minute's totals were written by its own sample.
			p := h.pending[k]
			p.NoTotals = true
			out = append(out, p)
		}
	}
	return append(out, cur), nil
}

// withCurrent merges what was not written yet into points, so that the
// charts are up to date however recent the last sample is.
func (h *history) withCurrent(points []state.HistoryPoint) ([]state.HistoryPoint, error) {
	h.mu.Lock()
	extra, err := h.unwritten()
	h.mu.Unlock()
	if err != nil {
		return points, err
	}
	for _, p := range extra {
		i, found := slices.BinarySearchFunc(points, p.Minute, func(a state.HistoryPoint, m time.Time) int { return a.Minute.Compare(m) })
		if !found {
			points = slices.Insert(points, i, p)
			continue
		}
		points[i].APICalls += p.APICalls
		points[i].Throttled += p.Throttled
		if !p.NoTotals {
			points[i].DeadLetters, points[i].Conflicts, points[i].NoTotals = p.DeadLetters, p.Conflicts, false
		}
	}
	return points, nil
}

// History returns what the health page charts: the points of the minutes
// from since on, the finished passes of every connector that started
// since (oldest first, the newest chartPasses), and the API quota.
func (d *Daemon) History(ctx context.Context, since time.Time) (admin.History, error) {
	out := admin.History{Since: since, QuotaPerMinute: d.cfg.Workspace.RateLimit * 60}
	var err error
	if out.Minutes, err = d.store.History.Since(since); err != nil {
		return out, err
	}
	if d.ops.history != nil {
		if out.Minutes, err = d.ops.history.withCurrent(out.Minutes); err != nil {
			return out, err
		}
	}
	for _, c := range d.connectors {
		runs, err := d.store.Runs.List(c.Name, chartPasses)
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
