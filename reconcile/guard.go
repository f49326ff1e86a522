package reconcile

import (
	"context"
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Guard keeps one connector's forward passes and its write-back (the
// reverse applier's rounds) from interleaving where they must not: a pass
// must never read a record written back but not yet recorded in its link
// (it would take the write-back for a change of the record and send it
// to the workspace, over any newer version still on its way), nor save a
// link built from a copy of a record older than a write-back recorded
// since.
//
// The reverse applier holds the guard (a sync.Locker) while it reads,
// writes and records one round's changes of the connector. A run holds it
// for one batch at a time, from the reading of the batch's links to the
// saving of the links it wrote, not for the whole pass: a write-back
// waits for at most one batch, not for a first sync of hours.
//
// Between two batches a round may write records back, and the pass may
// hold copies of some of them read before (a page read ahead, a search
// index behind). So the guard notes the records written back while a run
// goes on (Writer wraps the connector's writer), and each batch reads
// those again, under the guard, before it compares anything: it then
// sees the record as written back, or newer, and the link that records
// the write-back. A connector that cannot read records by ID, or that is
// not incremental, is held for the whole run; resyncs and dead-letter
// retries always are (a resync's sweep of unseen links must not meet a
// link a write-back made after the snapshot passed its record).
type Guard struct {
	mu sync.Mutex

	wmu sync.Mutex
	// written holds the IDs of the records written back since the run
	// began; nil when no run splits its exclusion into batches.
	written map[string]struct{}
}

// Lock takes the guard.
func (g *Guard) Lock() { g.mu.Lock() }

// Unlock releases it.
func (g *Guard) Unlock() { g.mu.Unlock() }

// Writer returns w noting the records it writes, for the batches of a run
// in progress to read them again.
func (g *Guard) Writer(w connector.Writer) connector.Writer {
	return &guardedWriter{w: w, g: g}
}

type guardedWriter struct {
	w connector.Writer
	g *Guard
}

// Write notes the changed records, whatever the outcome (a failed call may
// have been applied), and writes.
func (gw *guardedWriter) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	gw.g.noteWritten(changes)
	return gw.w.Write(ctx, changes)
}

func (g *Guard) noteWritten(changes []connector.Change) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if g.written == nil {
		return
	}
	for _, ch := range changes {
		if ch.ID != "" {
			g.written[ch.ID] = struct{}{}
		}
	}
}

// track starts or (on=false) stops noting write-backs.
func (g *Guard) track(on bool) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.written = nil
	if on {
		g.written = map[string]struct{}{}
	}
}

// writtenAmong returns the IDs of recs written back since the run began.
func (g *Guard) writtenAmong(recs []connector.Record) []string {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	var ids []string
	for _, rec := range recs {
		if _, ok := g.written[rec.ID]; ok {
			ids = append(ids, rec.ID)
		}
	}
	return ids
}

// passGuard is the guard step of a pass: g is the Guard, taken for each
// batch and each step that touches links (nil when the pass holds it
// whole, or has none); getter reads again the records written back
// meanwhile.
type passGuard struct {
	g      *Guard
	getter connector.Getter
	log    *logrus.Entry
	// streamed: the records come from a change stream (readAgain).
	streamed bool
}

// take sets up the pass's exclusion: per batch (pg.g set) when
// the connector allows it, else the guard held until release is called.
func (pg *passGuard) take(g *Guard, reader connector.Source, incremental bool) (release func()) {
	if g == nil {
		return func() {}
	}
	getter, ok := reader.(connector.Getter)
	if !ok || !incremental {
		g.Lock()
		return g.Unlock
	}
	g.Lock()
	g.track(true)
	g.Unlock()
	pg.g, pg.getter, pg.streamed = g, getter, streamReader(reader)
	return func() {
		g.Lock()
		g.track(false)
		g.Unlock()
	}
}

// exclusive runs one step of a run that reads or writes links under the
// guard, when the run takes it step by step.
func (pg *passGuard) exclusive(step func() error) error {
	if pg.g != nil {
		pg.g.Lock()
		defer pg.g.Unlock()
	}
	return step()
}

// reread replaces the copies of records written back since the run began
// by what the connector holds now; a record gone since is left out (the
// write-back that deleted it also dropped its link).
func (pg *passGuard) reread(ctx context.Context, recs []connector.Record) ([]connector.Record, error) {
	if pg.g == nil {
		return recs, nil
	}
	ids := pg.g.writtenAmong(recs)
	if len(ids) == 0 {
		return recs, nil
	}
	fresh, err := pg.getter.Get(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("read again %d records written back during the pass: %w", len(ids), err)
	}
	byID := make(map[string]connector.Record, len(fresh))
	for _, rec := range fresh {
		byID[rec.ID] = rec
	}
	stale := make(map[string]bool, len(ids))
	for _, id := range ids {
		stale[id] = true
	}
	out := make([]connector.Record, 0, len(recs))
	for _, rec := range recs {
		if stale[rec.ID] {
			cur, ok := byID[rec.ID]
			if !ok {
				continue
			}
			rec = readAgain(rec, cur, pg.streamed)
		}
		out = append(out, rec)
	}
	pg.log.WithField(logfield.Records, len(ids)).Debug("records written back during the pass read again")
	return out, nil
}
