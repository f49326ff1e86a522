package reconcile

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// watchedSource snapshots a tracker as each batch is handed over, before
// the reconciler handles it.
type watchedSource struct {
	connector.Source
	tr    *progress.Tracker
	snaps []progress.Snapshot
}

func (w *watchedSource) watch(fn connector.BatchFunc) connector.BatchFunc {
	return func(ctx context.Context, b connector.Batch) error {
		s, ok := w.tr.Snapshot()
		if !ok {
			s.Phase = "not running"
		}
		w.snaps = append(w.snaps, s)
		return fn(ctx, b)
	}
}

func (w *watchedSource) Changes(ctx context.Context, cp string, fn connector.BatchFunc) error {
	return w.Source.Changes(ctx, cp, w.watch(fn))
}

func (w *watchedSource) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return w.Source.Snapshot(ctx, w.watch(fn))
}

func (w *watchedSource) Count(ctx context.Context, cp string, snap bool) (connector.Total, error) {
	return w.Source.(connector.Counter).Count(ctx, cp, snap)
}

func TestPassesFeedTheirProgress(t *testing.T) {
	e := newEnv(t, 350, emulator.Options{})
	for _, kind := range []string{"run", "resync"} {
		t.Run(kind, func(t *testing.T) {
			r := e.reconciler()
			tr := progress.New(progress.Options{Calls: e.ws.Calls, RateLimit: 1000})
			w := &watchedSource{Source: r.opts.Reader, tr: tr}
			r.opts.Reader, r.opts.Progress = w, tr
			var err error
			if kind == "run" {
				_, err = r.Run(context.Background())
			} else {
				_, err = r.Resync(context.Background(), ResyncOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(w.snaps) != 4 {
				t.Fatalf("%d batches seen, want 4 of at most 100 rows", len(w.snaps))
			}
			for i, s := range w.snaps {
				if s.Kind != kind || s.Phase != progress.PhaseReading {
					t.Fatalf("batch %d: kind %q phase %q, want %q reading", i, s.Kind, s.Phase, kind)
				}
				if s.Total == nil || *s.Total != 350 || s.TotalIsEstimate {
					t.Errorf("batch %d: total %v (estimate %v), want the file's 350 rows", i, s.Total, s.TotalIsEstimate)
				}
				if s.Done != int64(100*i) {
					t.Errorf("batch %d: done %d, want %d", i, s.Done, 100*i)
				}
			}
			last := w.snaps[3]
			switch kind {
			case "run":
				if last.Writes["created"] != 300 || last.APICalls < 300 {
					t.Errorf("before the last batch of the first sync: writes %v, %d calls; want 300 created", last.Writes, last.APICalls)
				}
			case "resync":
				if last.Writes["unchanged"] != 300 || last.Writes["created"] != 0 {
					t.Errorf("before the last batch of the resync: writes %v; want 300 unchanged", last.Writes)
				}
			}
			if _, running := tr.Snapshot(); running {
				t.Error("the tracker still shows a pass after it ended")
			}
		})
	}
}

// estimatingSource estimates its total at 50 records and, once reading,
// at twice what it delivered.
type estimatingSource struct{ *watchedSource }

func (e estimatingSource) Count(context.Context, string, bool) (connector.Total, error) {
	return connector.Total{N: 50, Known: true, Estimate: true}, nil
}

func (e estimatingSource) Reestimate(done int64) (connector.Total, bool) {
	return connector.Total{N: 2 * done, Known: true, Estimate: true}, true
}

func TestABetterEstimateReplacesTheTotal(t *testing.T) {
	e := newEnv(t, 350, emulator.Options{})
	r := e.reconciler()
	tr := progress.New(progress.Options{Calls: e.ws.Calls})
	w := &watchedSource{Source: r.opts.Reader, tr: tr}
	r.opts.Reader, r.opts.Progress = estimatingSource{w}, tr
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []int64{50, 200, 400, 600} // Count's, then twice the records done
	for i, s := range w.snaps {
		if s.Total == nil || *s.Total != want[i] || !s.TotalIsEstimate {
			t.Errorf("batch %d: total %v (estimate %v), want about %d", i, s.Total, s.TotalIsEstimate, want[i])
		}
	}
}
