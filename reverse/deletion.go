package reverse

import (
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// The forward direction deletes the contact of a record gone at the
// source only after a last look at the inbox, just before the DELETE is
// sent; an app edit that lands while the DELETE is in flight is deleted
// with the contact, and its event comes once the link is gone (issue 35:
// the soak's latency faults). The forward direction records each such
// deletion first (state.ContactDeletion, with the contact version it
// weighed): a version newer than that, holding values the link did not,
// is an app edit made after the record's deletion, settled here by the
// connector's editAfterDelete rather than dropped, and journaled either
// way. When the edit wins (later than the record's deletion by more than
// policy.RaceWindow, with edit-wins), the record is made again from the
// edited version and left unlinked (state.PendingCreate.Remade): the
// contact is gone, and the forward pass makes the contact from the
// record. Otherwise the delete stands.

// settleDeletion settles group g of a contact syncd deleted (g.deletion);
// remake tells that the record is to be made again from g.contact.
func (r *round) settleDeletion(t *Target, g *group) (remake bool) {
	d := g.deletion
	n := len(g.versions)
	if n == 0 || !g.versions[n-1].UpdatedAt.After(d.Seen) {
		return r.deletionStands(g, nil)
	}
	v := g.versions[n-1]
	have := t.Mapper.FromContact(v)
	was, edited := map[string]string{}, map[string]string{}
	for _, k := range t.Mapper.ForwardTargets() {
		if have[k] != d.Fields[k] {
			was[k], edited[k] = d.Fields[k], have[k]
		}
	}
	if len(edited) == 0 {
		return r.deletionStands(g, nil)
	}
	rule := t.editAfterDelete()
	cf := &state.Conflict{Connector: t.Name, ExternalID: d.ExternalID, ContactID: g.contactID, Kind: state.KindEditAfterDelete,
		Policy: "editAfterDelete: " + rule.String(), Winner: t.Name, Workspace: edited, Source: was}
	remake = rule.EditWinsAfter(v.UpdatedAt, d.RecordDeletedAt) && t.writesBack()
	entry := r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: g.contactID,
		logfield.ExternalID: d.ExternalID, logfield.Policy: cf.Policy})
	if !remake {
		entry.Info("contact edited in the app while syncd deleted it with its record; the delete stands per editAfterDelete")
		return r.deletionStands(g, cf)
	}
	cf.Winner = "workspace"
	entry.Info("contact edited in the app while syncd deleted it with its record; the record is made again per editAfterDelete")
	g.remade = cf
	g.deleted, g.contact = false, v
	return true
}

// deletionStands acknowledges g, journaling cf when set; the deletion is
// settled once its contact's deletion event is read.
func (r *round) deletionStands(g *group, cf *state.Conflict) bool {
	if cf != nil {
		r.commit.Conflicts = append(r.commit.Conflicts, *cf)
	}
	if g.deleted || cf != nil {
		r.commit.DropDeletions = append(r.commit.DropDeletions, *g.deletion)
	}
	r.a.count(func(s *Stats) { s.Ignored++ })
	r.ack(g)
	return false
}

// finishRemade settles a record made again by settleDeletion: it stays
// unlinked (its contact is gone), the journal entry is written, and the
// deletion and the pending create are dropped with the events.
func (b *batch) finishRemade(j *createJob) {
	r, g := b.r, j.g
	r.commit.DropPending = append(r.commit.DropPending, j.pending)
	if g.deletion != nil {
		r.commit.DropDeletions = append(r.commit.DropDeletions, *g.deletion)
	}
	if g.remade != nil {
		r.commit.Conflicts = append(r.commit.Conflicts, *g.remade)
	}
	r.a.count(func(s *Stats) { s.Created++ })
	r.ack(g)
	r.a.log.WithFields(map[string]any{logfield.Connector: b.t.Name, logfield.Contact: g.contactID, logfield.Record: j.pending.RecordID}).
		Info("record made again from the app's edit of a deleted contact; the forward pass makes its contact")
}
