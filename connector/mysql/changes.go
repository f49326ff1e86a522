package mysql

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Changes reads the rows after checkpoint (a sqlkit.Position) in
// (cursor, id) order. With a lookback, a batch's checkpoint is never
// later than the server's clock at the start of the read minus lookback.
func (s *Source) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.binlog != nil {
		return s.binlogChanges(ctx, checkpoint, fn)
	}
	if isBinlogCheckpoint(checkpoint) {
		// Changes were streamed until the connector was switched to
		// poll: read every row once.
		checkpoint = ""
	}
	pos, err := sqlkit.ParseCheckpoint(checkpoint)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.tbl.name, err)
	}
	start := time.Now()
	var p sqlkit.Pager = pager{s: s}
	if pos != nil && s.tbl.updated.kind.isTime() && s.tbl.lookback > 0 {
		safe, err := p.SafeBound(ctx)
		if err != nil {
			return err
		}
		p = boundPager{pager{s: s}, safe}
		if pos.U > safe {
			// A checkpoint is never later than the bound when it is
			// taken, and the bound only moves forward: this one was
			// taken from times stamped in another zone (by syncd's
			// session at +00:00 before it wrote in the DATETIME values'
			// zone, or a timeZone changed since). Read on from the
			// bound, or the edits stamped in the zone until the clock
			// reaches the checkpoint would be passed over. Until a batch
			// moves the checkpoint, each pass reads on from the first
			// bound, so that a late commit is not lost between passes.
			from, first := s.readOnFrom(checkpoint, safe)
			if first {
				s.log.WithFields(logrus.Fields{logfield.Checkpoint: pos.U, logfield.TimeZone: s.zone.loc.String()}).
					Warn("mysql checkpoint is ahead of the server's clock in the cursor's zone; reading from the clock minus lookback")
			}
			pos = &sqlkit.Position{U: from}
		}
	}
	rows, batches, err := sqlkit.ReadChanges(ctx, p, "mysql batch of "+s.tbl.name, pos, s.batchSize, fn)
	if err != nil {
		return err
	}
	s.log.WithFields(logrus.Fields{logfield.Rows: rows, logfield.Batches: batches, logfield.Duration: time.Since(start)}).Debug("mysql changes read")
	return nil
}

// pager is the table's sqlkit.Pager. Its snapshot pages are read on db
// when set (the connection of a consistent snapshot).
type pager struct {
	s  *Source
	db queryer
}

// boundPager is a pager whose SafeBound is already read.
type boundPager struct {
	pager
	safe string
}

func (p boundPager) SafeBound(context.Context) (string, error) { return p.safe, nil }

func (p pager) ChangesPage(ctx context.Context, pos *sqlkit.Position, limit int) ([]connector.Record, sqlkit.Position, error) {
	switch {
	case pos == nil:
		return p.s.page(ctx, p.s.q.changesFromStart, limit)
	case pos.ID == nil:
		return p.s.page(ctx, p.s.q.changesFrom, pos.U, limit)
	}
	return p.s.page(ctx, p.s.q.changesAfter, pos.U, pos.U, *pos.ID, limit)
}

func (p pager) SnapshotPage(ctx context.Context, after *string, limit int) ([]connector.Record, sqlkit.Position, error) {
	db := p.db
	if db == nil {
		db = p.s.db
	}
	if after == nil {
		return p.s.pageOn(ctx, db, p.s.q.snapshotFirst, limit)
	}
	return p.s.pageOn(ctx, db, p.s.q.snapshotAfter, *after, limit)
}

// SafeBound is the server's UTC clock minus lookback, in the cursor's
// zone (UTC for TIMESTAMP, the DATETIME values' zone for DATETIME and
// DATE, at the smaller offset when that zone's clocks go back soon).
func (p pager) SafeBound(ctx context.Context) (string, error) {
	t := p.s.tbl
	if t.lookback <= 0 {
		return "", nil
	}
	var now string
	if err := p.s.db.QueryRowContext(ctx, "SELECT DATE_FORMAT(UTC_TIMESTAMP(6), "+cursorFormat+")").Scan(&now); err != nil {
		return "", p.s.readError(ctx, err)
	}
	tm, err := time.ParseInLocation(cursorText, now, time.UTC)
	if err != nil {
		return "", fmt.Errorf("read %s: server clock %q: %w", t.name, now, err)
	}
	if t.updated.kind == kindTimestamp {
		return tm.Add(-t.lookback).Format(cursorText), nil
	}
	return wallBound(t.loc, tm.Add(-t.lookback)), nil
}

// After compares time cursors by their fixed-width text, which orders as
// the times do (SafeBound is only set for time cursors).
func (p pager) After(_ context.Context, a, b string) (bool, error) { return a > b, nil }

// aheadCheckpoint is where reads go on from for a checkpoint found ahead
// of the server's clock.
type aheadCheckpoint struct {
	mu               sync.Mutex
	checkpoint, from string
}

// readOnFrom returns the bound reads of checkpoint go on from: safe the
// first time, the bound first returned while the same checkpoint comes
// back.
func (s *Source) readOnFrom(checkpoint, safe string) (from string, first bool) {
	a := &s.ahead
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.checkpoint == checkpoint && a.from <= safe {
		return a.from, false
	}
	a.checkpoint, a.from = checkpoint, safe
	return safe, true
}
