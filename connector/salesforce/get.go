package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/syncd-io/syncd/connector"
)

// Get reads records by id through queryAll: deleted ones come back with
// Deleted set; ids that are not records are left out.
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	var out []connector.Record
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if validID(id) {
			valid = append(valid, id)
		}
	}
	for len(valid) > 0 {
		n := min(len(valid), maxCollection)
		chunk := valid[:n]
		valid = valid[n:]
		next := call{method: http.MethodGet, path: "/queryAll", query: url.Values{"q": {s.selectClause() + " WHERE Id IN (" + quoteAll(chunk) + ")"}}}
		for {
			var page queryAnswer
			if err := s.c.do(ctx, next, &page); err != nil {
				return nil, fmt.Errorf("read %d %s records: %w", len(chunk), s.object, err)
			}
			recs, _, err := s.records(page.Records)
			if err != nil {
				return nil, err
			}
			out = append(out, recs...)
			if page.Done || page.NextRecordsURL == "" {
				break
			}
			next = call{method: http.MethodGet, path: page.NextRecordsURL, abs: true}
		}
	}
	return out, nil
}
