package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// deleter is the settle step for records gone at the source: it unlinks
// or deletes their contacts per onSourceDelete, behind the mass-delete
// guard, and weighs the app edits made around each deletion.
type deleter struct {
	r     *Reconciler
	links interface {
		Get(connector, externalID string) (l state.Link, ok bool, err error)
		Delete(connector, externalID string) error
	}
	conflicts interface {
		Add(c state.Conflict) (uint64, error)
	}
	inbox interface {
		Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
		PendingOf(contactID string) ([]state.InboxEvent, error)
	}
	// letters clears the write-back's dead letters a settled deletion
	// answers (settleEdit).
	letters interface {
		Clear(connector, operation, key string) error
	}
	// deletions, when set, records each contact deleted (ContactDeletion).
	deletions interface {
		PutDeletion(d state.ContactDeletion) error
		DropDeletion(connector, contactID string) error
	}
	tally    *tally
	plan     *planner
	warnings *warnings
}

// deleteRecords applies onSourceDelete to records a connector reported as
// deleted (incremental connectors).
func (d *deleter) deleteRecords(ctx context.Context, recs []connector.Record, linked int) error {
	var gone []state.Link
	deletedAt := map[string]time.Time{}
	for _, rec := range recs {
		ext, err := d.r.opts.Mapper.ExternalID(rec)
		if err != nil {
			d.r.log.WithError(err).WithField(logfield.Record, rec.ID).Warn("deleted record has no externalId; ignored")
			continue
		}
		l, ok, err := d.links.Get(d.r.opts.Connector, ext)
		if err != nil {
			return fmt.Errorf("read link %s: %w", ext, err)
		}
		if ok {
			gone = append(gone, l)
			deletedAt[ext] = rec.UpdatedAt
		}
	}
	return d.applyDeletes(ctx, gone, deletedAt, linked)
}

// applyDeletes follows onSourceDelete for links whose record is gone,
// behind the mass-delete breaker.
func (d *deleter) applyDeletes(ctx context.Context, gone []state.Link, deletedAt map[string]time.Time, linked int) error {
	r := d.r
	if len(gone) == 0 || r.opts.OnSourceDelete == policy.DeleteIgnore {
		return nil
	}
	gone, read, err := d.editsAfterSourceDelete(ctx, gone, deletedAt)
	if err != nil {
		return err
	}
	d.tally.mu.Lock()
	already := d.tally.sum.Deleted
	d.tally.mu.Unlock()
	if r.opts.OnSourceDelete == policy.DeleteRemove && !r.opts.AllowMassDelete && linked > 0 {
		if share := float64(already+len(gone)) / float64(linked); share > r.opts.MassDeleteThreshold {
			return fmt.Errorf("%w: this run would delete %d of %d linked contacts (%.0f%%), over the %.0f%% threshold; check the source, then run again with --allow-mass-delete",
				ErrMassDelete, already+len(gone), linked, share*100, r.opts.MassDeleteThreshold*100)
		}
	}
	for _, l := range gone {
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			d.plan.planned("delete", l.ExternalID, l.ContactID, nil, nil)
		} else {
			d.plan.planned("unlink", l.ExternalID, l.ContactID, nil, nil)
		}
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			kept, err := d.deleteContact(ctx, l, read[l.ContactID], deletedAt[l.ExternalID])
			if err != nil {
				return err
			}
			if kept {
				continue
			}
		}
		if err := d.links.Delete(r.opts.Connector, l.ExternalID); err != nil {
			return fmt.Errorf("drop link %s: %w", l.ExternalID, err)
		}
		d.warnings.drop(l.ExternalID)
		d.tally.count(func(s *Summary) {
			if r.opts.OnSourceDelete == policy.DeleteRemove {
				s.Deleted++
			} else {
				s.Unlinked++
			}
		})
	}
	return nil
}

// editsAfterSourceDelete settles, before onSourceDelete: delete deletes
// their contacts, the links whose contact was edited in the app since
// the last sync (see above); it returns the links to go on with.
func (d *deleter) editsAfterSourceDelete(ctx context.Context, gone []state.Link, deletedAt map[string]time.Time) ([]state.Link, map[string]*workspace.Contact, error) {
	r := d.r
	if r.opts.OnSourceDelete != policy.DeleteRemove || !r.opts.WeighAppEdits || len(gone) == 0 {
		return gone, nil, nil
	}
	ids := make([]string, len(gone))
	for i, l := range gone {
		ids[i] = l.ExternalID
	}
	found, err := r.opts.Workspace.ContactsByExternalIDs(ctx, r.opts.Source, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("read %d contacts before deleting them: %w", len(ids), err)
	}
	read := make(map[string]*workspace.Contact, len(found))
	for i := range found {
		read[found[i].ID] = &found[i]
	}
	out := gone[:0:0]
	for _, l := range gone {
		c, ok := read[l.ContactID]
		if !ok {
			out = append(out, l)
			continue
		}
		if kept, err := d.settleEdit(l, *c, deletedAt[l.ExternalID]); err != nil || kept {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		out = append(out, l)
	}
	return out, read, nil
}

// settleEdit settles a link whose record is gone by the app's edits that
// contact c, its contact as read, holds since the link (none: nothing to
// settle). When the edit wins, the record is to be made again (see
// recreate) and the link is dropped; kept tells so. Either way an edit is
// journaled.
func (d *deleter) settleEdit(l state.Link, c workspace.Contact, deletedAt time.Time) (kept bool, err error) {
	r := d.r
	have := r.opts.Mapper.FromContact(c)
	was, edited := map[string]string{}, map[string]string{}
	for _, k := range r.opts.Mapper.ForwardTargets() {
		if have[k] != l.Fields[k] {
			was[k], edited[k] = l.Fields[k], have[k]
		}
	}
	if len(edited) == 0 {
		return false, nil
	}
	if deletedAt.IsZero() {
		deletedAt = r.opts.Now()
	}
	cf, keep := r.afterDelete(l.ExternalID, l.ContactID, edited, was, c.UpdatedAt, deletedAt, "workspace")
	if _, err := d.conflicts.Add(cf); err != nil {
		return false, fmt.Errorf("record conflict: %w", err)
	}
	r.log.WithFields(map[string]any{logfield.ExternalID: l.ExternalID, logfield.Contact: l.ContactID,
		logfield.Policy: cf.Policy, logfield.Winner: cf.Winner}).Info("contact edited around its record's deletion; settled per editAfterDelete")
	// The write-back met the app's edits first, the record gone, and set
	// them aside (record not found) until the pass carried the deletion:
	// settled and journaled now, they need no operator (issue 35's soak:
	// hundreds of such dead letters left after an hour).
	if err := d.letters.Clear(r.opts.Connector, state.OpWriteBack, l.ContactID); err != nil {
		return false, fmt.Errorf("clear the write-back's dead letter of contact %s: %w", l.ContactID, err)
	}
	if !keep {
		return false, nil
	}
	// The write-back creates the record again from the contact, and
	// links them, once the link is gone (an event enqueued before, so
	// that a crash between the two leaves the link, and the deletion
	// to be read again).
	if err := d.recreate(c); err != nil {
		return false, err
	}
	if err := d.links.Delete(r.opts.Connector, l.ExternalID); err != nil {
		return false, fmt.Errorf("drop link %s: %w", l.ExternalID, err)
	}
	d.tally.count(func(s *Summary) { s.Unlinked++ })
	return true, nil
}

// errEditedSinceRead ends a contact's delete before it is sent: the app
// edited the contact after the pass read it.
var errEditedSinceRead = errors.New("contact edited in the app since it was read")

// deleteContact deletes the contact of a link whose record is gone. The
// pass read the contact before deciding (editsAfterSourceDelete), but the
// delete is sent only once the rate limiter lets it, seconds later at
// times: an app edit made meanwhile, whose event is in the inbox by then,
// would be deleted unweighed (issue 35: an app edit 7.7 s after the
// table's delete, gone with no journal entry). So just before the delete
// is sent, the contact's pending events newer than the version read are
// looked at (no call); an edit among them is settled like one read
// (settleEdit), and the delete is sent only if it loses. kept tells that
// the contact stays.
func (d *deleter) deleteContact(ctx context.Context, l state.Link, read *workspace.Contact, deletedAt time.Time) (kept bool, err error) {
	r := d.r
	var edited *workspace.Contact
	dctx := ctx
	if read != nil {
		dctx = workspace.WithBeforeSend(ctx, func() error {
			c, err := d.newerVersion(l.ContactID, read.UpdatedAt)
			if err != nil {
				return err
			}
			if c == nil {
				return d.recordDeletion(l, read.UpdatedAt, deletedAt)
			}
			edited = c
			return errEditedSinceRead
		})
	}
	err = r.opts.Workspace.DeleteContact(dctx, l.ContactID)
	if errors.Is(err, errEditedSinceRead) {
		if kept, err := d.settleEdit(l, *edited, deletedAt); err != nil || kept {
			if kept && d.deletions != nil {
				// An earlier attempt, which failed, may have recorded it.
				if err := d.deletions.DropDeletion(r.opts.Connector, l.ContactID); err != nil {
					return kept, fmt.Errorf("drop deletion of contact %s: %w", l.ContactID, err)
				}
			}
			return kept, err
		}
		if err := d.recordDeletion(l, edited.UpdatedAt, deletedAt); err != nil {
			return false, err
		}
		err = r.opts.Workspace.DeleteContact(ctx, l.ContactID)
	}
	if err != nil && !workspace.IsNotFound(err) {
		return false, fmt.Errorf("delete contact %s: %w", l.ContactID, err)
	}
	return false, nil
}

// recordDeletion records, just before the DELETE of link l's contact is
// sent (each attempt), the contact version seen (state.ContactDeletion): an app edit that lands
// while the DELETE is in flight is weighed by the write-back when its
// event comes, never dropped.
func (d *deleter) recordDeletion(l state.Link, seen, deletedAt time.Time) error {
	if d.deletions == nil {
		return nil
	}
	if deletedAt.IsZero() {
		deletedAt = d.r.opts.Now()
	}
	err := d.deletions.PutDeletion(state.ContactDeletion{Connector: d.r.opts.Connector, ContactID: l.ContactID,
		ExternalID: l.ExternalID, Fields: l.Fields, Seen: seen, RecordDeletedAt: deletedAt})
	if err != nil {
		return fmt.Errorf("record deletion of contact %s: %w", l.ContactID, err)
	}
	return nil
}

// newerVersion returns the newest version of a contact waiting in the
// inbox that is newer than since, nil when there is none.
func (d *deleter) newerVersion(contactID string, since time.Time) (*workspace.Contact, error) {
	evs, err := d.inbox.PendingOf(contactID)
	if err != nil {
		return nil, fmt.Errorf("read pending events of contact %s: %w", contactID, err)
	}
	var newest *workspace.Contact
	for _, e := range evs {
		if e.Type != workspace.EventContactUpdated || !e.ContactUpdatedAt.After(since) {
			continue
		}
		c, err := eventContact(e)
		if err != nil || (newest != nil && !c.UpdatedAt.After(newest.UpdatedAt)) {
			continue
		}
		newest = &c
	}
	return newest, nil
}

// recreate asks the write-back to create a record for contact c again:
// an inbox event carrying c, naming the connector (state.InboxEvent's
// Recreate). Its id is new each time: a repeat after a crash finds the
// contact linked and is applied as an update.
func (d *deleter) recreate(c workspace.Contact) error {
	r := d.r
	now := r.opts.Now()
	id := "recreate:" + c.ID + ":" + strconv.FormatInt(now.UnixNano(), 10)
	e, err := versionEvent(id, c, now)
	if err != nil {
		return fmt.Errorf("recreate record of contact %s: %w", c.ID, err)
	}
	e.Recreate = r.opts.Connector
	if _, _, err := d.inbox.Enqueue(e); err != nil {
		return fmt.Errorf("recreate record of contact %s: %w", c.ID, err)
	}
	return nil
}
