package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/logfield"
)

// position is a place in the (cursor, id) order (see sqlkit.Position).
type position = sqlkit.Position

func parseCheckpoint(checkpoint string) (*position, error) {
	if _, ok, err := checkpointLSN(checkpoint); err == nil && ok {
		// A logical replication checkpoint: changes were streamed until
		// the connector was switched to poll. Read every row once.
		return nil, nil
	}
	return sqlkit.ParseCheckpoint(checkpoint)
}

// Changes reads the rows after checkpoint in (cursor, id) order. With a
// lookback, a batch's checkpoint is never later than the server's clock
// at the start of the read minus lookback.
func (s *Source) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.logical != nil {
		return s.streamChanges(ctx, checkpoint, fn)
	}
	pos, err := parseCheckpoint(checkpoint)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.tbl.name, err)
	}
	start := time.Now()
	rows, batches, err := sqlkit.ReadChanges(ctx, pager{s: s}, "postgres batch of "+s.tbl.name, pos, s.batchSize, fn)
	if err != nil {
		return err
	}
	s.log.WithFields(logrus.Fields{logfield.Rows: rows, logfield.Batches: batches, logfield.Duration: time.Since(start)}).Debug("postgres changes read")
	return nil
}

// pager is the table's sqlkit.Pager. Its snapshot pages are read on db
// when set (a transaction in a replication slot's snapshot).
type pager struct {
	s  *Source
	db reader
}

func (p pager) ChangesPage(ctx context.Context, pos *position, limit int) ([]connector.Record, position, error) {
	switch {
	case pos == nil:
		return p.s.page(ctx, p.s.q.changesFromStart, limit)
	case pos.ID == nil:
		return p.s.page(ctx, p.s.q.changesFrom, limit, pos.U)
	}
	return p.s.page(ctx, p.s.q.changesAfter, limit, pos.U, *pos.ID)
}

func (p pager) SnapshotPage(ctx context.Context, after *string, limit int) ([]connector.Record, position, error) {
	db := p.db
	if db == nil {
		db = p.s.pool
	}
	if after == nil {
		return p.s.pageOn(ctx, db, p.s.q.snapshotFirst, limit)
	}
	return p.s.pageOn(ctx, db, p.s.q.snapshotAfter, limit, *after)
}

func (p pager) SafeBound(ctx context.Context) (string, error) {
	if p.s.tbl.lookback <= 0 {
		return "", nil
	}
	var safe string
	interval := fmt.Sprintf("%d microseconds", p.s.tbl.lookback.Microseconds())
	if err := p.s.pool.QueryRow(ctx, p.s.q.safeBound, interval).Scan(&safe); err != nil {
		return "", p.s.readError(ctx, err)
	}
	return safe, nil
}

func (p pager) After(ctx context.Context, a, b string) (bool, error) {
	var after bool
	if err := p.s.pool.QueryRow(ctx, p.s.q.after, a, b).Scan(&after); err != nil {
		return false, p.s.readError(ctx, err)
	}
	return after, nil
}
