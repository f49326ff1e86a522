package reconcile

import (
	"fmt"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// writer is the write stage: it brings one item's contact in line with
// its record -- patch, create, adopt or link, weighing the app edits in
// the inbox and the edits made around a delete -- and records the link.
// Several workers share it; what it counts goes to the pass's tally, the
// records it sets aside to its letters.
type writer struct {
	r     *Reconciler // the connector's settings, mapper and workspace
	links interface {
		Get(connector, externalID string) (l state.Link, ok bool, err error)
		Put(l state.Link) error
		Delete(connector, externalID string) error
	}
	conflicts interface {
		Add(c state.Conflict) (uint64, error)
	}
	inbox interface {
		PendingOf(contactID string) ([]state.InboxEvent, error)
		Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	}
	held interface {
		Is(connector, contactID string) (bool, error)
	}
	runID   uint64
	rulesOf func() rules // the pass's rules as they stand
	tally   *tally
	letters *letters
	plan    *planner
}

// saveLink records that contact c now holds the item's values.
func (w *writer) saveLink(it *item, c workspace.Contact) error {
	l := w.newLink(it, c)
	if err := w.links.Put(l); err != nil {
		return fmt.Errorf("save link %s: %w", l.ExternalID, err)
	}
	if it.link != nil {
		return nil
	}
	// A contact made: the times its record's values kept meanwhile
	// (making.go).
	if es := w.r.makings.linked(l.ExternalID, l.ContactID, l.SourceUpdatedAt); len(es) > 0 && w.r.opts.Store.RecordEdits != nil {
		if err := w.r.opts.Store.RecordEdits.PutRecordEdits(w.r.opts.Connector, l.ContactID, es); err != nil {
			return fmt.Errorf("save record edit times of %s: %w", l.ExternalID, err)
		}
	}
	return nil
}

// newLink is the link recording that contact c holds the item's values.
func (w *writer) newLink(it *item, c workspace.Contact) state.Link {
	r := w.r
	now := r.opts.Now()
	l := state.Link{}
	if it.link != nil {
		l = *it.link
	}
	l.Connector = r.opts.Connector
	l.ExternalID = it.mapped.ExternalID
	l.ContactID = c.ID
	l.RecordID = it.rec.ID
	l.Fields = map[string]string(it.fields)
	l.ItemIDs = mapping.ItemIDs(c)
	l.WorkspaceHash = it.hash
	l.SourceHash = it.hash
	l.Fingerprint = fingerprint(r.opts.Mapper, it.rec, it.hash)
	l.WorkspaceWrittenAt = now
	l.ContactUpdatedAt = c.UpdatedAt
	l.SourceUpdatedAt = it.rec.UpdatedAt
	l.LastSeenRun = w.runID
	return l
}

// written tells Options.Written how long the item's change took to
// reach its contact.
func (w *writer) written(it *item) {
	if fn := w.r.opts.Written; fn != nil && !it.rec.UpdatedAt.IsZero() {
		fn(w.r.opts.Now().Sub(it.rec.UpdatedAt))
	}
}

// countWritten counts an item linked to, or written to, a contact it
// found by its externalId: as created when that contact is the one this
// pass's own create made (its answer was lost), else by count.
func (w *writer) countWritten(it *item, count func(*Summary)) {
	if it.landed {
		w.tally.count(func(s *Summary) { s.Created++ })
		return
	}
	w.tally.count(count)
}

// patchBody is mapping.PatchBody plus the sourceUrl pseudo-field.
func patchBody(have, want mapping.Fields, itemIDs map[string]string) workspace.ContactPatch {
	body := mapping.PatchBody(have, want, itemIDs)
	if h, w := have[sourceURLKey], want[sourceURLKey]; h != w {
		if w == "" {
			body.SourceURL = workspace.Null[string]()
		} else {
			body.SourceURL = workspace.Some(w)
		}
	}
	return body
}
