package reverse

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
)

// A contact deleted in the app whose record was edited after the
// deletion (onWorkspaceDelete: delete) is an edit after a delete, which
// the connector's editAfterDelete settles rather than the order in which
// syncd happens to see the two: with edit-wins, a record edit later than
// the deletion by more than policy.RaceWindow keeps the record (only the
// link is dropped, and the forward pass makes the contact again from the
// record); otherwise the record is deleted. Either way, a record holding
// an edit not yet synced when the deletion is applied is journaled
// (state.KindEditAfterDelete): an edit is never dropped silently. The
// records are read once per round, only for the deletions.

// editsAfterDelete reads the records of the deletions dels and settles
// those edited since the last sync; it returns the deletions to go on
// with.
func (b *batch) editsAfterDelete(ctx context.Context, dels []*group) ([]*group, error) {
	t, r := b.t, b.r
	if len(dels) == 0 || t.Getter == nil {
		return dels, nil
	}
	ids := make([]string, len(dels))
	for i, g := range dels {
		ids[i] = deleteID(t, g)
	}
	recs, err := t.Getter.Get(ctx, ids)
	if err != nil {
		for _, g := range dels {
			r.failed(t, g, opDelete, &wholeCallError{err}, connector.Wait)
		}
		return nil, fmt.Errorf("read %d records of deleted contacts: %w", len(ids), err)
	}
	byID := make(map[string]*connector.Record, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	out := dels[:0:0]
	for i, g := range dels {
		rec := byID[ids[i]]
		if rec != nil {
			g.recordAt = rec.UpdatedAt
		}
		cf := editedSince(t, g, rec)
		if cf == nil {
			out = append(out, g)
			continue
		}
		entry := r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: g.contactID,
			logfield.Record: rec.ID, logfield.Policy: cf.Policy, logfield.Winner: cf.Winner})
		if cf.Winner == "workspace" {
			// Journaled once the record is deleted (settleDelete): the
			// mass-delete guard may hold the deletion for rounds.
			entry.Info("contact deleted in the workspace; its record, edited since, is deleted per editAfterDelete")
			g.afterDelete = cf
			out = append(out, g)
			continue
		}
		r.commit.Conflicts = append(r.commit.Conflicts, *cf)
		entry.Info("contact deleted in the workspace before its record was edited; the record stays and its contact is made again, per editAfterDelete")
		b.unlink(g)
		r.a.count(func(s *Stats) { s.Unlinked++ })
		r.ack(g)
	}
	return out, nil
}

// editedSince returns the journal entry of a record that holds an edit
// not yet synced when its contact's deletion is applied, nil when it
// holds none (or is gone); the entry's Winner is the connector when the
// edit wins.
func editedSince(t *Target, g *group, rec *connector.Record) *state.Conflict {
	if rec == nil || rec.Deleted {
		return nil
	}
	m, err := t.Mapper.ToContact(*rec)
	if err != nil {
		return nil
	}
	was, now := map[string]string{}, map[string]string{}
	for _, k := range t.Mapper.ForwardTargets() {
		if g.orphan && !contains(t.Mapper.ReverseTargets(), k) {
			continue // an orphan's link knows only the values sent
		}
		if m.Fields[k] != g.link.Fields[k] {
			was[k], now[k] = g.link.Fields[k], m.Fields[k]
		}
	}
	if len(now) == 0 {
		return nil
	}
	rule := t.editAfterDelete()
	cf := &state.Conflict{Connector: t.Name, ExternalID: g.link.ExternalID, ContactID: g.contactID, Kind: state.KindEditAfterDelete,
		Policy: "editAfterDelete: " + rule.String(), Winner: "workspace", Workspace: was, Source: now}
	if rule.EditWinsAfter(rec.UpdatedAt, g.deletedAt) {
		cf.Winner = t.Name
	}
	return cf
}

// editAfterDelete is the connector's editAfterDelete rule, edit-wins when
// unset (the configuration's default).
func (t *Target) editAfterDelete() policy.EditAfterDelete {
	if t.EditAfterDelete == "" {
		return policy.EditWins
	}
	return t.EditAfterDelete
}
