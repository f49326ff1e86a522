package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// errAbort marks failures that concern the whole run (bad credentials),
// not one record: the pass stops instead of setting records aside.
var errAbort = errors.New("run aborted")

// write brings one item's contact in line with its record, retrying
// transient failures with backoff and setting the record aside as a dead
// letter when it is refused or keeps failing. It returns an error only
// when the whole pass must stop.
func (w *writer) write(ctx context.Context, it *item) error {
	r := w.r
	wait := r.opts.Backoff
	for attempt := 1; ; attempt++ {
		err := w.writeOnce(ctx, it)
		if err == nil {
			w.letters.clearDeadLetter(it)
			return nil
		}
		if workspace.IsUnauthorized(err) {
			return fmt.Errorf("%w: %w", errAbort, err)
		}
		if ctx.Err() != nil {
			// The drain after a shutdown request ran out (see
			// writeContext): the record did not fail, it was cut short.
			// Stop the batch without setting it aside; the batch is not
			// checkpointed, so the next run writes it, looking up a
			// create that may have been applied before making another.
			return fmt.Errorf("write %s cut short by shutdown: %w", it.mapped.ExternalID, err)
		}
		permanent := !workspace.IsTransient(err) && !errors.Is(err, workspace.ErrOutcomeUnknown)
		var rw *recordWriteError
		if errors.As(err, &rw) {
			// A write into the connector's system: the rule every
			// writer of the connectors follows.
			permanent = connector.Dispose(rw.err) == connector.Permanent
		}
		if permanent || attempt >= r.opts.MaxAttempts {
			w.letters.setAside(ctx, opSync, it.mapped.ExternalID, it.rec, it.hash, permanent, err)
			return nil
		}
		r.log.WithError(err).WithField(logfield.ExternalID, it.mapped.ExternalID).WithField(logfield.Attempt, attempt).Debug("write failed, retrying")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Second)
	}
}

// writeOnce makes one attempt: it carries out the actions decide picks
// until one ends the attempt (written, linked, or failed).
func (w *writer) writeOnce(ctx context.Context, it *item) error {
	it.lost = nil
	ru := w.rulesOf()
	for {
		a := decide(it, ru)
		done, err := w.execute(ctx, it, a)
		if err != nil || done {
			return err
		}
	}
}

// execute carries out one write-phase action. done is false when the
// action learned something (recorded on the item) that calls for another.
func (w *writer) execute(ctx context.Context, it *item, a action) (done bool, err error) {
	switch a {
	case actPatch:
		return w.patchLinked(ctx, it)
	case actDeleteRecord:
		keep, err := w.editAfterWorkspaceDelete(it)
		if err != nil {
			return true, err
		}
		if !keep {
			return true, w.applyWorkspaceDelete(ctx, it)
		}
		return false, w.forget(it) // the record stays: its contact is made again
	case actForget:
		return false, w.forget(it)
	case actLinkFound:
		return true, w.linkFound(it)
	case actAdoptFound:
		return w.adoptFound(ctx, it)
	case actLinkMatch:
		return true, w.linkMatch(it)
	case actAdoptMatch:
		return w.adoptMatch(ctx, it)
	case actResolve:
		return w.resolveUncertain(ctx, it)
	case actFailLost:
		return true, fmt.Errorf("create contact %s: %w", it.mapped.ExternalID, it.lost)
	case actCreate:
		return w.create(ctx, it)
	}
	return true, fmt.Errorf("record %s: cannot %s while writing", it.mapped.ExternalID, a)
}

// update patches a contact with the fields that differ from have; a
// contact deleted in the workspace meanwhile marks the item gone.
func (w *writer) update(ctx context.Context, it *item, contactID string, have mapping.Fields, itemIDs map[string]string) (bool, error) {
	body := patchBody(have, it.fields, itemIDs)
	w.plan.planned("update", it.mapped.ExternalID, contactID, have, it.fields)
	c, err := w.r.opts.Workspace.UpdateContact(ctx, contactID, body)
	if workspace.IsNotFound(err) {
		it.gone = true
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("patch contact %s: %w", contactID, err)
	}
	if err := w.saveLink(it, c); err != nil {
		return true, err
	}
	w.countWritten(it, func(s *Summary) { s.Updated++ })
	w.written(it)
	return true, nil
}

// patchLinked patches a linked contact with what its record changed,
// after weighing the app edits of it waiting in the inbox, and then
// those that came while the patch was in flight (see appedits.go).
func (w *writer) patchLinked(ctx context.Context, it *item) (bool, error) {
	r := w.r
	have := mapping.Fields(it.link.Fields)
	if !r.opts.WeighAppEdits {
		return w.update(ctx, it, it.link.ContactID, have, it.link.ItemIDs)
	}
	want, agreed := it.fields, it.fields
	ae, seq, before, err := w.weighAppEdits(it, want)
	if err != nil {
		return true, err
	}
	kept := map[string]string{}
	var lost []*state.Conflict
	var times []state.RecordEdit
	if ae != nil && ae.wait != "" {
		r.log.WithFields(map[string]any{logfield.ExternalID: it.mapped.ExternalID, logfield.Contact: it.link.ContactID, logfield.Field: ae.wait}).
			Debug("conflict on a value newer than the stream's copy left to the version that made it")
		w.tally.count(func(s *Summary) { s.Unchanged++ })
		return true, nil
	}
	if ae != nil {
		want, agreed, kept, lost = ae.want, ae.agreed, ae.kept, append(lost, ae.lost)
		times = ae.times
	}
	body := patchBody(have, want, it.link.ItemIDs)
	if body.IsEmpty() {
		// Every change lost to an app edit that the write-back brings to
		// the record; the link stays as it is for it to do so.
		if err := w.putRecordEdits(it, times, it.link.SourceUpdatedAt); err != nil {
			return true, err
		}
		w.tally.count(func(s *Summary) { s.Unchanged++ })
		return true, nil
	}
	w.plan.planned("update", it.mapped.ExternalID, it.link.ContactID, have, want)
	c, err := r.opts.Workspace.UpdateContact(ctx, it.link.ContactID, body)
	if workspace.IsNotFound(err) {
		it.gone = true
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("patch contact %s: %w", it.link.ContactID, err)
	}
	late, last, err := w.overwritten(it, seq, want, c.UpdatedAt)
	if err != nil {
		return true, err
	}
	wrote := want
	if late != nil {
		lost = append(lost, late.lost)
		times = append(times, late.times...)
		if len(late.kept) > 0 {
			// The patch overwrote app edits that win: put them back,
			// unless the app edited them again since the patch (its
			// newer edit stands, and the write-back applies it).
			restore := copyFields(want)
			again, err := w.editedSince(it, c.UpdatedAt, want)
			if err != nil {
				return true, err
			}
			for k, v := range late.kept {
				if !again[k] {
					restore[k] = v
				}
			}
			if body := patchBody(want, restore, mapping.ItemIDs(c)); !body.IsEmpty() {
				if c, err = r.opts.Workspace.UpdateContact(ctx, it.link.ContactID, body); err != nil {
					return true, fmt.Errorf("put back app edits of contact %s: %w", it.link.ContactID, err)
				}
				wrote = restore
			}
			agreed = copyFields(agreed)
			for k, v := range late.kept {
				kept[k] = v
				setOrDelete(agreed, k, late.agreed)
			}
		}
	}
	for _, cf := range lost {
		if cf == nil {
			continue
		}
		if _, err := w.conflicts.Add(*cf); err != nil {
			return true, fmt.Errorf("record conflict: %w", err)
		}
	}
	if len(kept) == 0 {
		err = w.saveLink(it, c)
	} else {
		err = w.saveKept(it, c, agreed)
	}
	if err != nil {
		return true, err
	}
	w.putFlight(it, last, c, len(kept) > 0, have, before, wrote, agreed)
	if len(kept) > 0 {
		// The link now agrees on this version of the record (newLink).
		if err := w.putRecordEdits(it, times, it.rec.UpdatedAt); err != nil {
			return true, err
		}
	}
	w.tally.count(func(s *Summary) { s.Updated++ })
	w.written(it)
	return true, nil
}

// editedSince returns the targets the app edited again after syncd's
// patch answered at patchedAt (a version after it holding another value
// than the one patched, wrote): the inbox, read once more just before a
// put-back, so that the put-back never overwrites them (issue 35: a
// put-back of the app's company 0.1 s after the app's newer edit of it).
func (w *writer) editedSince(it *item, patchedAt time.Time, wrote mapping.Fields) (map[string]bool, error) {
	vs, _, err := w.pendingVersions(it, 0, false)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, v := range vs {
		if !v.at.After(patchedAt) {
			continue
		}
		for _, k := range w.r.opts.Mapper.ReverseTargets() {
			if v.fields[k] != wrote[k] {
				out[k] = true
			}
		}
	}
	return out, nil
}

// putRecordEdits records the record's own edit times that an app edit
// won by, for the write-back to weigh with (appEdits.times), valid while
// the link agrees on the record's version since.
func (w *writer) putRecordEdits(it *item, es []state.RecordEdit, since time.Time) error {
	st := w.r.opts.Store.RecordEdits
	if len(es) == 0 || st == nil {
		return nil
	}
	for i := range es {
		es[i].Since = since
	}
	if err := st.PutRecordEdits(w.r.opts.Connector, it.link.ContactID, es); err != nil {
		return fmt.Errorf("save record edit times of %s: %w", it.mapped.ExternalID, err)
	}
	w.r.log.WithFields(map[string]any{logfield.Contact: it.link.ContactID, logfield.RecordEdits: fmt.Sprint(es)}).Debug("record edit times kept for the write-back")
	return nil
}

// saveKept records a patch that left out (or put back) fields whose app
// edit won: the link holds agreed (their last agreed values) and no
// fingerprint, and its
// ContactUpdatedAt is just before the patch's answer, so that the
// write-back applies the patch's echo (which holds the app's values) and
// not the older versions (see appedits.go).
func (w *writer) saveKept(it *item, c workspace.Contact, agreed mapping.Fields) error {
	l := w.newLink(it, c)
	l.Fields = map[string]string(agreed)
	l.WorkspaceHash = agreed.Hash()
	l.SourceHash = l.WorkspaceHash
	l.Fingerprint = [8]byte{}
	l.ContactUpdatedAt = c.UpdatedAt.Add(-time.Nanosecond)
	if err := w.links.Put(l); err != nil {
		return fmt.Errorf("save link %s: %w", l.ExternalID, err)
	}
	return nil
}

// forget drops what the item knew of a contact deleted in the workspace
// (its link, found or matched contact): the record still exists at the
// source, so it is created again, with no look-up or match.
func (w *writer) forget(it *item) error {
	if it.link != nil {
		if err := w.links.Delete(w.r.opts.Connector, it.mapped.ExternalID); err != nil {
			return fmt.Errorf("drop link %s: %w", it.mapped.ExternalID, err)
		}
	}
	it.link, it.found, it.match, it.ambiguous, it.gone = nil, nil, nil, nil, false
	it.lookedUp, it.matched = true, true
	return nil
}

// linkFound links a contact that already carries the record's externalId
// and its values.
func (w *writer) linkFound(it *item) error {
	if err := w.saveLink(it, *it.found); err != nil {
		return err
	}
	w.countWritten(it, func(s *Summary) { s.Unchanged++ })
	return nil
}

// create makes the contact. When the answer is lost (the write may or may
// not have been applied) or the service failed, the item becomes
// uncertain: the externalId is looked up before anything else.
func (w *writer) create(ctx context.Context, it *item) (bool, error) {
	r := w.r
	w.plan.planned("create", it.mapped.ExternalID, "", nil, it.fields)
	c, err := r.opts.Workspace.CreateContact(ctx, mapping.CreateBody(r.opts.Source, it.mapped))
	if err == nil {
		if err := w.saveLink(it, c); err != nil {
			return true, err
		}
		w.tally.count(func(s *Summary) { s.Created++ })
		w.written(it)
		return true, nil
	}
	if !errors.Is(err, workspace.ErrOutcomeUnknown) && !workspace.IsTransient(err) {
		return true, fmt.Errorf("create contact %s: %w", it.mapped.ExternalID, err)
	}
	it.uncertain, it.lost = true, err
	return false, nil
}

// resolveUncertain looks up a record whose create may have been applied.
// Until a look-up answers, the item stays uncertain and is never created
// again: a retry starts with the look-up.
func (w *writer) resolveUncertain(ctx context.Context, it *item) (bool, error) {
	r := w.r
	found, err := r.opts.Workspace.ContactsByExternalIDs(ctx, r.opts.Source, []string{it.mapped.ExternalID})
	if err != nil {
		return true, fmt.Errorf("look up contact %s after a failed create: %w", it.mapped.ExternalID, errors.Join(it.lost, err))
	}
	it.uncertain = false
	if c, ok := oldestByExternalID(found)[it.mapped.ExternalID]; ok {
		w.r.setFound(it, &c)
		it.lost, it.landed = nil, true
		r.log.WithField(logfield.ExternalID, it.mapped.ExternalID).Info("create was applied although its answer was lost; adopting the contact")
	}
	return false, nil
}

// recordWriteError is the failure of a write into the connector's system
// (not the workspace's), settled by connector.Dispose.
type recordWriteError struct{ err error }

func (e *recordWriteError) Error() string { return e.err.Error() }
func (e *recordWriteError) Unwrap() error { return e.err }

// applyWorkspaceDelete deletes the record of a contact deleted in the
// workspace (soft where the connector can), then drops the link.
func (w *writer) applyWorkspaceDelete(ctx context.Context, it *item) error {
	r := w.r
	// The write-back's mass-delete guard may hold this very deletion for
	// an operator: the forward pass does not make it behind its back.
	if held, err := w.held.Is(r.opts.Connector, it.link.ContactID); err != nil {
		return fmt.Errorf("read held deletes: %w", err)
	} else if held {
		r.log.WithField(logfield.ExternalID, it.mapped.ExternalID).Info("contact was deleted in the workspace; its record's deletion is held by the mass-delete guard")
		return nil
	}
	if w, ok := r.opts.Reader.(connector.Writer); ok && it.link.RecordID != "" {
		res, err := w.Write(ctx, []connector.Change{{Op: connector.OpDelete, ID: it.link.RecordID, Soft: r.opts.Type.SoftDelete}})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		if err != nil && !errors.Is(err, connector.ErrNotFound) {
			return &recordWriteError{fmt.Errorf("delete record %s of a contact deleted in the workspace: %w", it.link.RecordID, err)}
		}
	}
	if err := w.links.Delete(r.opts.Connector, it.mapped.ExternalID); err != nil {
		return fmt.Errorf("drop link %s: %w", it.mapped.ExternalID, err)
	}
	r.log.WithField(logfield.ExternalID, it.mapped.ExternalID).Info("contact was deleted in the workspace; record deleted per onWorkspaceDelete")
	w.tally.count(func(s *Summary) { s.Unlinked++ })
	return nil
}
