package mysql

import (
	"context"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Snapshot reads every live row in id order.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.binlog != nil {
		// A resync: the stream goes on from the snapshot's position.
		pos, err := s.binlogSnapshot(ctx, fn)
		if err != nil {
			return err
		}
		s.binlog.mu.Lock()
		s.binlog.resume = &pos
		s.binlog.mu.Unlock()
		return nil
	}
	return s.snapshotOn(ctx, s.db, fn)
}

// snapshotOn reads every live row of db in id order.
func (s *Source) snapshotOn(ctx context.Context, db queryer, fn connector.BatchFunc) error {
	return sqlkit.ReadSnapshot(ctx, pager{s: s, db: db}, "mysql batch of "+s.tbl.name, s.batchSize, fn)
}
