package hubspot

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
)

// Snapshot reads every live contact through the list endpoint (GET
// /crm/v3/objects/contacts, paged with `after`, pageSize contacts a page
// but at most 100), which has no 10,000-result cap. One page is one
// batch.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	after := ""
	for {
		ans, err := s.listPage(ctx, false, after)
		if err != nil {
			return fmt.Errorf("list contacts: %w", err)
		}
		if len(ans.Results) > 0 {
			recs := make([]connector.Record, 0, len(ans.Results))
			for _, o := range ans.Results {
				recs = append(recs, s.record(o))
			}
			if err := fn(ctx, connector.Batch{Records: recs}); err != nil {
				return fmt.Errorf("hubspot snapshot: %w", err)
			}
		}
		if ans.Paging == nil || ans.Paging.Next == nil || ans.Paging.Next.After == "" {
			return nil
		}
		if ans.Paging.Next.After == after {
			return fmt.Errorf("list contacts: paging.next.after %q repeats: refusing to loop", after)
		}
		after = ans.Paging.Next.After
	}
}
