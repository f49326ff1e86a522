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
	return sqlkit.ReadSnapshot(ctx, pager{s}, "mysql batch of "+s.tbl.name, s.batchSize, fn)
}
