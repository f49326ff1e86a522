package reconcile

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// An edit on one side after a delete on the other is settled by the
// connector's editAfterDelete, not by the order in which syncd happens
// to see the two, and journaled either way (state.KindEditAfterDelete):
//
//   - A record edited after its contact was deleted in the app
//     (onWorkspaceDelete: delete; the pass meets it as a patch answered
//     404): with edit-wins and an edit later than the deletion by more
//     than policy.RaceWindow, the record stays and its contact is made
//     again; otherwise the record is deleted. The deletion's time is the
//     createdAt of its event waiting in the inbox, else now (an upper
//     bound: the delete then wins).
//   - A contact edited in the app after its record was deleted
//     (onSourceDelete: delete, on a connector whose app edits flow back):
//     before deleting contacts, the pass reads them (one listing per 50
//     deletions, only then) and with edit-wins keeps a contact edited
//     more than policy.RaceWindow after its record's deletion, and the
//     write-back makes its record again (recreate); otherwise it is
//     deleted.
//     The deletion's time is the deleted record's UpdatedAt, else now.
//
// The reverse direction follows the same rule for the deletion events it
// applies (reverse/editafterdelete.go).

// conflictPolicy is the connector's conflict policy, newest-wins when
// unset.
func (r *Reconciler) conflictPolicy() policy.Conflict {
	if r.opts.Conflict == "" {
		return policy.NewestWins
	}
	return r.opts.Conflict
}

func (r *Reconciler) editAfterDelete() policy.EditAfterDelete {
	if r.opts.EditAfterDelete == "" {
		return policy.EditWins
	}
	return r.opts.EditAfterDelete
}

// afterDelete is the journal entry of an edit after a delete; keep tells
// whether the edit wins.
func (r *Reconciler) afterDelete(ext, contactID string, ws, src map[string]string, editAt, deleteAt time.Time, editedSide string) (state.Conflict, bool) {
	rule := r.editAfterDelete()
	keep := rule.EditWinsAfter(editAt, deleteAt)
	winner := editedSide
	if !keep {
		winner = r.opts.Connector
		if editedSide == r.opts.Connector {
			winner = "workspace"
		}
	}
	return state.Conflict{Connector: r.opts.Connector, ExternalID: ext, ContactID: contactID, Kind: state.KindEditAfterDelete,
		Policy: "editAfterDelete: " + rule.String(), Winner: winner, Workspace: ws, Source: src}, keep
}

// editAfterWorkspaceDelete settles an item whose record changed since the
// link and whose contact is gone (see above): keep is true when the
// record stays and its contact is to be made again.
func (w *writer) editAfterWorkspaceDelete(it *item) (keep bool, err error) {
	r := w.r
	deletedAt := r.opts.Now()
	evs, err := w.inbox.PendingOf(it.link.ContactID)
	if err != nil {
		return false, fmt.Errorf("read pending events of contact %s: %w", it.link.ContactID, err)
	}
	for _, e := range evs {
		if e.Type == workspace.EventContactDeleted {
			if at := eventTime(e); at.Before(deletedAt) {
				deletedAt = at
			}
		}
	}
	was, now := map[string]string{}, map[string]string{}
	for k, v := range it.fields {
		if it.link.Fields[k] != v {
			was[k], now[k] = it.link.Fields[k], v
		}
	}
	cf, keep := r.afterDelete(it.mapped.ExternalID, it.link.ContactID, was, now, it.rec.UpdatedAt, deletedAt, r.opts.Connector)
	if _, err := w.conflicts.Add(cf); err != nil {
		return false, fmt.Errorf("record conflict: %w", err)
	}
	r.log.WithFields(map[string]any{logfield.ExternalID: it.mapped.ExternalID, logfield.Contact: it.link.ContactID,
		logfield.Policy: cf.Policy, logfield.Winner: cf.Winner}).Info("record edited around its contact's deletion in the workspace; settled per editAfterDelete")
	return keep, nil
}

// eventTime is when an inbox event happened: its createdAt, else when it
// was received.
func eventTime(e state.InboxEvent) time.Time {
	var env struct {
		CreatedAt time.Time `json:"createdAt"`
	}
	if json.Unmarshal(e.Body, &env) == nil && !env.CreatedAt.IsZero() {
		return env.CreatedAt
	}
	return e.ReceivedAt
}
