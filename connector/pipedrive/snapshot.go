package pipedrive

import (
	"context"
	"fmt"
	"net/url"

	"github.com/syncd-io/syncd/connector"
)

// Snapshot calls fn with every live person, by ascending id.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	cursor := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		q := url.Values{"sort_by": {"id"}, "sort_direction": {"asc"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		pg, err := s.listPersons(ctx, q)
		if err != nil {
			return fmt.Errorf("list persons: %w", err)
		}
		recs, err := s.records(ctx, pg.Data)
		if err != nil {
			return err
		}
		live := recs[:0]
		for _, r := range recs {
			if !r.Deleted {
				live = append(live, r)
			}
		}
		if len(live) > 0 {
			if err := fn(ctx, connector.Batch{Records: live}); err != nil {
				return fmt.Errorf("pipedrive batch: %w", err)
			}
		}
		if cursor = pg.next(); cursor == "" {
			return nil
		}
	}
}
