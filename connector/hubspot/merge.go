package hubspot

import (
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
