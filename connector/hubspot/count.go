package hubspot

import (
	"context"
	"fmt"
	"net/http"

	"github.com/syncd-io/syncd/connector"
)

var _ connector.Counter = (*Source)(nil)

// Count asks the search endpoint for one contact of the read's window
// and takes the answer's total: one search call (paced by the search
// limiter like any other) instead of the read's many. For Changes the
// window is the checkpoint's (the contacts still to read in it); for a
// snapshot, every contact modified up to now. Archivals, which Changes
// also delivers, are not counted (the listing of archived contacts has
// no total): a pass that reads some goes past the total, and progress
// then shows the count it reached.
func (s *Source) Count(ctx context.Context, checkpoint string, snapshot bool) (connector.Total, error) {
	var cur searchCursor
	if !snapshot {
		cp, err := parseCheckpoint(checkpoint)
		if err != nil {
			return connector.Total{}, err
		}
		cur = cp.Search
	}
	if cur.Until == 0 {
		cur.Until = max(s.now().UnixMilli(), cur.Since+1)
		cur.After = ""
	}
	body := s.searchRequest(cur)
	body.Limit = 1
	body.Properties = []string{"hs_object_id"}
	var ans searchAnswer
	cl := call{method: http.MethodPost, path: searchPath, body: body, search: true, idempotent: true}
	if _, err := s.c.do(ctx, cl, &ans); err != nil {
		return connector.Total{}, fmt.Errorf("count contacts: %w", err)
	}
	return connector.Total{N: int64(ans.Total), Known: true}, nil
}
