package reconcile

import (
	"fmt"

	"github.com/syncd-io/syncd/state"
)

// A contact made in the app gets its record from the write-back
// (onWorkspaceCreate: create) in steps: the record is made, the contact
// is given the record's externalId, then the link is stored (reverse's
// create.go). Between the first and the last (a linking PATCH retried
// under faults, a restart) the pass may read the new record without a
// link. Looked up by externalId it finds nothing, and the pass made a
// second contact for the same person. It leaves such a record to the
// write-back instead, which asks it to read the record again once the
// link is stored (state.Revisit, in the same commit), so that an edit
// made in the record meanwhile still reaches the contact.
//
// Meanwhile the record's values keep their edit times as a linked
// record's do (observe), under the link the pending create promises (the
// values sent, no version yet: state.RecordEdit.Since zero, bound to the
// link when it is stored). A row edited, then the contact in the app,
// then another column of the row, all before the link, is weighed at
// each field's own time, not at the updated_at the last edit moved
// (issue 35: the 9 journaled losses of the hour-long poll soak).

// markCreating sets the creating link of the items without a link whose
// record a pending create of the write-back names. One read of the
// pending creates per batch holding records without a link.
func (r *Reconciler) markCreating(items []*item) error {
	st := r.opts.Store.Creates
	if st == nil || !anyUnlinked(items) {
		return nil
	}
	ps, err := st.Pending(r.opts.Connector)
	if err != nil {
		return fmt.Errorf("read pending creates: %w", err)
	}
	byRecord := map[string]state.PendingCreate{}
	for _, p := range ps {
		// A record made again for a contact deleted since (Remade) is
		// left for the pass to make its contact.
		if p.RecordID != "" && !p.Remade {
			byRecord[p.RecordID] = p
		}
	}
	if len(byRecord) == 0 {
		return nil
	}
	twoWay := twoWayTargets(r)
	for _, it := range items {
		p, ok := byRecord[it.rec.ID]
		if it.link != nil || !ok {
			continue
		}
		l := &state.Link{Connector: r.opts.Connector, ExternalID: it.mapped.ExternalID, ContactID: p.ContactID,
			RecordID: p.RecordID, Fields: map[string]string{}}
		for _, k := range twoWay {
			if v := p.Fields[k]; v != "" {
				l.Fields[k] = v
			}
		}
		it.creating = l
	}
	return nil
}

func anyUnlinked(items []*item) bool {
	for _, it := range items {
		if it.link == nil {
			return true
		}
	}
	return false
}
