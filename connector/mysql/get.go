package mysql

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

var _ connector.Getter = (*Source)(nil)

// getChunk bounds the ids of one Get statement.
const getChunk = 1000

// Get reads the rows with the given ids, soft-deleted ones included (with
// Deleted set); ids without a row are left out. It selects what the reads
// select, so that records read by Get and by Changes compare equal.
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []connector.Record
	for start := 0; start < len(ids); start += getChunk {
		chunk := ids[start:min(start+getChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		recs, _, err := s.page(ctx, s.q.getQuery(s.tbl, len(chunk)), args...)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}
