package hubspot

import (
	"context"
	"fmt"
	"net/http"

	"github.com/syncd-io/syncd/connector"
)

var _ connector.Getter = (*Source)(nil)

// Get reads contacts by id through the batch read endpoint, 100 ids per
// call, with the properties the connector reads. Ids of no live contact
// are left out (HubSpot answers 207 and names them in errors[]); archived
// contacts are not returned, nor are ids merged into another contact.
func (s *Source) Get(ctx context.Context, ids []string) ([]connector.Record, error) {
	var out []connector.Record
	for start := 0; start < len(ids); start += maxBatchInputs {
		req := batchRequest{Properties: s.props}
		for _, id := range ids[start:min(start+maxBatchInputs, len(ids))] {
			if validID(id) {
				req.Inputs = append(req.Inputs, batchInput{ID: id})
			}
		}
		if len(req.Inputs) == 0 {
			continue
		}
		var ans batchAnswer
		cl := call{method: http.MethodPost, path: batchPath + "read", body: req, idempotent: true}
		if _, err := s.c.do(ctx, cl, &ans); err != nil {
			return nil, fmt.Errorf("read %d contacts: %w", len(req.Inputs), err)
		}
		asked := make(map[string]bool, len(req.Inputs))
		for _, in := range req.Inputs {
			asked[in.ID] = true
		}
		for _, r := range ans.Results {
			// An id merged away reads as the contact it was merged into,
			// under that contact's id: it names no live contact of its
			// own, and the merged one comes with its own id in changes.
			if rec := s.record(r.object); asked[rec.ID] {
				delete(asked, rec.ID) // once, even when other ids point to it
				out = append(out, rec)
			}
		}
	}
	return out, nil
}
