package postgres

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
)

// Snapshot reads every live row in id order.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	var after *string
	for {
		q, args := s.q.snapshotFirst, []any{s.batchSize}
		if after != nil {
			q, args = s.q.snapshotAfter, []any{s.batchSize, *after}
		}
		recs, last, err := s.page(ctx, q, args...)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		after = last.ID
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, connector.Batch{Records: recs}); err != nil {
			return fmt.Errorf("postgres batch of %s: %w", s.tbl.name, err)
		}
		if len(recs) < s.batchSize {
			return nil
		}
	}
}
