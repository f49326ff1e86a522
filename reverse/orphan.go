package reverse

import (
	"context"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// A contact deleted in the app after syncd created its record but before
// the record was linked to it (the linking PATCH answered 404, or the
// deletion reached syncd while the create's pending marker held a record
// id) leaves a record no link names. Left so, the forward direction would
// take it for a new row and make its contact again: the deletion undone,
// and after a restart that made the record twice, the person twice
// (issue 35: the poll soak, seed 5). Such a record is an orphan: it is
// settled as the deletion of a linked contact is, by onWorkspaceDelete
// and editAfterDelete (planDeletes), under a link made from its pending
// create that is never stored. Its pending create is dropped only in the
// commit that acknowledges the contact's events, so that a crash before
// it meets the same orphan again, never a contact without a marker to
// create anew. Deleting it undoes syncd's own write, not a person's: the
// mass-delete guard does not count it. With ignore or unlink the record
// stays unlinked, as a deleted contact's record does under unlink.

// orphan marks g, a contact deleted in the workspace whose record p
// created is not linked, as an orphan with a link made from p.
func orphan(t *Target, g *group, p state.PendingCreate) {
	g.link = pendingLink(t, p)
	g.pending = &p
	g.orphan = true
	g.deleted = true
}

// pendingLink is the link an orphan is settled under: its record id,
// and the values sent for the targets flowing both ways (what both sides
// held when the record was made, editedSince compares the record with).
func pendingLink(t *Target, p state.PendingCreate) *state.Link {
	ext := p.RecordID
	if e, err := t.Mapper.ExternalID(connector.Record{ID: p.RecordID}); err == nil && e != "" {
		ext = e
	}
	fields := map[string]string{}
	for _, k := range t.Mapper.ReverseTargets() {
		if v := p.Fields[k]; v != "" && contains(t.Mapper.ForwardTargets(), k) {
			fields[k] = v
		}
	}
	return &state.Link{Connector: t.Name, ExternalID: ext, ContactID: p.ContactID, RecordID: p.RecordID,
		Fields: fields, ContactUpdatedAt: p.ContactUpdatedAt}
}

// unlink drops g's link in the round's commit, or an orphan's pending
// create (its link was never stored).
func (b *batch) unlink(g *group) {
	if g.orphan {
		b.r.commit.DropPending = append(b.r.commit.DropPending, *g.pending)
		return
	}
	b.r.commit.Unlink = append(b.r.commit.Unlink, *g.link)
}

// settleOrphans settles the orphans found while linking created records
// (finishCreate), in a Write call of their own.
func (b *batch) settleOrphans(ctx context.Context, orphans []*group) error {
	if len(orphans) == 0 {
		return nil
	}
	for _, g := range orphans {
		b.r.a.log.WithFields(map[string]any{logfield.Connector: b.t.Name, logfield.Contact: g.contactID, logfield.Record: g.link.RecordID}).
			Warn("contact deleted in the workspace before its record was linked; the record is settled per onWorkspaceDelete")
	}
	ob := &batch{r: b.r, t: b.t}
	if err := ob.planDeletes(ctx, orphans); err != nil {
		return err
	}
	return ob.write(ctx)
}
