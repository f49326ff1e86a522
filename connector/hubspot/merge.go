package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

// mergedProperty holds, on a contact that results from a merge, the ids
// of the contacts merged into it, semicolon-delimited, cumulative over
// merges. Those contacts are gone: HubSpot does not archive them (they
// are documented nowhere in the archived list) and their ids now read as
// the merged contact.
const mergedProperty = "hs_merged_object_ids"

// mergedAway returns, for the contact o read as r, one Deleted record per
// id merged into it, with MergedInto set to r's id: the reconciler moves
// the link (and the contact) of the first of them that has one to r, and
// applies onSourceDelete to the others, which were duplicates. The ids
// come in ascending order (the oldest contact first: HubSpot does not say
// which one was the merge's primary). Ids of no number and r's own id (a
// merge that kept the primary's id lists only the others, but a list
// that names it is not a merge of r into itself) are left out.
//
// Reading the same merged contact again emits the same records again;
// the reconciler finds no link left for them and does nothing.
func mergedAway(o object, r connector.Record) []connector.Record {
	v := o.Properties[mergedProperty]
	if v == nil || *v == "" {
		return nil
	}
	var ids []int64
	for _, part := range strings.Split(*v, ";") {
		if n, ok := parseInt(strings.TrimSpace(part)); ok && strconv.FormatInt(n, 10) != r.ID {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]connector.Record, 0, len(ids))
	for _, n := range ids {
		id := strconv.FormatInt(n, 10)
		out = append(out, connector.Record{
			ID: id, Deleted: true, MergedInto: r.ID, UpdatedAt: r.UpdatedAt,
			Fields: map[string]any{"hs_object_id": id},
		})
	}
	return out
}

// resolveMerged sets MergedInto on the archived contacts of recs that
// were in fact merged away, for a HubSpot that lists those among the
// archived (its documentation does not say whether it does). An id
// merged away reads as the contact it was merged into, whose
// hs_merged_object_ids names it; an archived id reads as nothing. One
// batch read per 100 archivals, only when the scan found new ones. This
// matters when the archived scan sees a merge before search shows the
// merged contact (the search index is late): without it, the merged-away
// contacts would follow onSourceDelete and the merged contact would get
// a new one.
func (s *Source) resolveMerged(ctx context.Context, recs []connector.Record) error {
	for start := 0; start < len(recs); start += maxBatchInputs {
		chunk := recs[start:min(start+maxBatchInputs, len(recs))]
		req := batchRequest{Properties: []string{"hs_object_id", mergedProperty}}
		at := make(map[string]int, len(chunk))
		for i, r := range chunk {
			if validID(r.ID) {
				req.Inputs = append(req.Inputs, batchInput{ID: r.ID})
				at[r.ID] = start + i
			}
		}
		if len(req.Inputs) == 0 {
			continue
		}
		var ans batchAnswer
		cl := call{method: http.MethodPost, path: batchPath + "read", body: req, idempotent: true}
		if _, err := s.c.do(ctx, cl, &ans); err != nil {
			return fmt.Errorf("read %d archived contacts for merges: %w", len(req.Inputs), err)
		}
		for _, res := range ans.Results {
			into := res.ID
			for _, gone := range mergedAway(res.object, connector.Record{ID: into}) {
				if i, ok := at[gone.ID]; ok && into != "" {
					recs[i].MergedInto = into
				}
			}
		}
	}
	return nil
}
