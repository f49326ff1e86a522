package mysql

import (
	"context"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.Getter = (*Source)(nil)

// Get reads the rows with the given ids, soft-deleted ones included (with
// Deleted set); ids without a row are left out. It selects what the reads
// select, so that records read by Get and by Changes compare equal.
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return sqlkit.GetInChunks(ctx, ids, func(ctx context.Context, chunk []string) ([]connector.Record, error) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		recs, _, err := s.page(ctx, s.q.getQuery(s.tbl, len(chunk)), args...)
		return recs, err
	})
}
