package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// An unlinked contact that carries the record's externalId is most often
// syncd's own create whose link was lost (syncd killed between the create
// and the link). It was made with the record's values of then; a value it
// holds that differs from the record now is either an older record value
// (the record changed since) or an app edit made since the create. Only
// the contact's updatedAt tells them apart: a contact never changed since
// it was made holds no app edit, and is patched as before. One changed
// since (updatedAt after createdAt) may hold app edits: on a connector
// whose app edits flow back, each field it holds differently is settled
// by the conflict policy, the app's edit taken at the contact's updatedAt
// (the latest it can be). Issue 35: the poll soak, an app edit 3.7 s
// after the restart that followed a lost create's link, overwritten by
// the table's older value.
//
// A field whose app value wins is left out of the patch; the link agrees
// on the record's value, and the contact's version is handed to the
// write-back (an inbox event, as a catch-up would), which brings the
// app's value to the record. Journaled either way.

// adoptFound links the found contact of an item and patches what its
// record changed, weighing what the app may have changed (see above).
func (w *writer) adoptFound(ctx context.Context, it *item) (bool, error) {
	r := w.r
	c := *it.found
	if !r.opts.WeighAppEdits || !c.UpdatedAt.After(c.CreatedAt) {
		return w.update(ctx, it, c.ID, it.foundHave, mapping.ItemIDs(c))
	}
	conflict := r.conflictPolicy()
	want := copyFields(it.fields)
	kept := map[string]string{}
	journal := map[string]*state.Conflict{} // by winner
	for _, k := range r.opts.Mapper.ReverseTargets() {
		app, rec := it.foundHave[k], it.fields[k]
		if !r.forwardTarget(k) || app == rec {
			continue
		}
		winner := r.opts.Connector
		if conflict.WorkspaceWins(c.UpdatedAt, it.rec.UpdatedAt) {
			winner = "workspace"
			kept[k] = app
			setOrDelete(want, k, it.foundHave)
		}
		cf := journal[winner]
		if cf == nil {
			cf = &state.Conflict{Connector: r.opts.Connector, ExternalID: it.mapped.ExternalID, ContactID: c.ID,
				Policy: conflict.String(), Winner: winner, Workspace: map[string]string{}, Source: map[string]string{}}
			journal[winner] = cf
		}
		cf.Workspace[k], cf.Source[k] = app, rec
	}
	if len(journal) == 0 {
		return w.update(ctx, it, c.ID, it.foundHave, mapping.ItemIDs(c))
	}
	r.log.WithFields(map[string]any{logfield.ExternalID: it.mapped.ExternalID, logfield.Contact: c.ID, logfield.Policy: conflict,
		logfield.AppEditAt: c.UpdatedAt, logfield.RecordEditAt: it.rec.UpdatedAt}).
		Info("unlinked contact carrying the record's externalId changed since it was made; its values weighed by policy")
	if body := patchBody(it.foundHave, want, mapping.ItemIDs(c)); !body.IsEmpty() {
		w.plan.planned("update", it.mapped.ExternalID, c.ID, it.foundHave, want)
		got, err := r.opts.Workspace.UpdateContact(ctx, c.ID, body)
		if workspace.IsNotFound(err) {
			it.gone = true
			return false, nil
		}
		if err != nil {
			return true, fmt.Errorf("patch contact %s: %w", c.ID, err)
		}
		c = got
	}
	for _, winner := range []string{r.opts.Connector, "workspace"} {
		if cf := journal[winner]; cf != nil {
			if _, err := w.conflicts.Add(*cf); err != nil {
				return true, fmt.Errorf("record conflict: %w", err)
			}
		}
	}
	if len(kept) > 0 {
		// The link agrees on the record's values; the contact's version,
		// handed to the write-back, brings the app's to the record.
		if err := w.saveKept(it, c, it.fields); err != nil {
			return true, err
		}
		if err := w.handBack(c); err != nil {
			return true, err
		}
	} else if err := w.saveLink(it, c); err != nil {
		return true, err
	}
	w.countWritten(it, func(s *Summary) { s.Updated++ })
	return true, nil
}

// handBack queues a version of a linked contact for the write-back, as
// a catch-up listing would (state.InboxEvent: its id made of the
// contact's id and updatedAt, so a version is queued once).
func (w *writer) handBack(c workspace.Contact) error {
	id := "adopt:" + c.ID + ":" + strconv.FormatInt(c.UpdatedAt.UnixNano(), 10)
	e, err := versionEvent(id, c, w.r.opts.Now())
	if err != nil {
		return err
	}
	if _, _, err := w.inbox.Enqueue(e); err != nil {
		return fmt.Errorf("hand contact %s to the write-back: %w", c.ID, err)
	}
	return nil
}

// versionEvent is an inbox event carrying version c of a contact, as a
// delivery would (contact.updated, data.object).
func versionEvent(id string, c workspace.Contact, now time.Time) (state.InboxEvent, error) {
	res, err := json.Marshal(c)
	if err != nil {
		return state.InboxEvent{}, fmt.Errorf("encode contact %s: %w", c.ID, err)
	}
	body, err := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, CreatedAt: now.UTC(),
		Type: workspace.EventContactUpdated, Data: workspace.EventData{Object: res}})
	if err != nil {
		return state.InboxEvent{}, fmt.Errorf("encode event of contact %s: %w", c.ID, err)
	}
	return state.InboxEvent{ID: id, Type: workspace.EventContactUpdated, ContactID: c.ID, ContactUpdatedAt: c.UpdatedAt, Body: body}, nil
}
