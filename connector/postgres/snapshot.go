package postgres

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
	if s.logical != nil {
		return s.logicalSnapshot(ctx, fn)
	}
	return s.snapshotOn(ctx, s.pool, fn)
}

// snapshotOn reads every live row of db in id order.
func (s *Source) snapshotOn(ctx context.Context, db reader, fn connector.BatchFunc) error {
	return sqlkit.ReadSnapshot(ctx, pager{s: s, db: db}, "postgres batch of "+s.tbl.name, s.batchSize, fn)
}
