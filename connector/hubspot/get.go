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
	err := s.readByID(ctx, ids, s.props, func(asked map[string]bool, objs []object) {
		for _, o := range objs {
			// An id merged away reads as the contact it was merged into,
			// under that contact's id: it names no live contact of its
			// own, and the merged one comes with its own id in changes.
			if rec := s.record(o); asked[rec.ID] {
				delete(asked, rec.ID) // once, even when other ids point to it
				out = append(out, rec)
			}
		}
	})
	return out, err
}

// readByID reads contacts by id through the batch read endpoint, 100
// ids per call, with properties props, and gives each call's ids and
// answer to fn.
func (s *Source) readByID(ctx context.Context, ids, props []string, fn func(asked map[string]bool, objs []object)) error {
	for start := 0; start < len(ids); start += maxBatchInputs {
		req := batchRequest{Properties: props}
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
			return fmt.Errorf("read %d contacts: %w", len(req.Inputs), err)
		}
		asked := make(map[string]bool, len(req.Inputs))
		for _, in := range req.Inputs {
			asked[in.ID] = true
		}
		objs := make([]object, len(ans.Results))
		for i, r := range ans.Results {
			objs[i] = r.object
		}
		fn(asked, objs)
	}
	return nil
}
