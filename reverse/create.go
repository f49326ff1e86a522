package reverse

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

// Creating the record of a contact made in the workspace's app
// (onWorkspaceCreate: create) takes three steps, each recorded so that a
// redelivered event, or a restart after a crash, never creates twice:
//
//  1. a pending create is written to state, keyed by the contact id,
//     holding the version's values and updatedAt;
//  2. the record is created (OpCreate, in the round's one Write call);
//     its id is written into the pending create at once;
//  3. the contact is given its externalId and the connector's source
//     (PATCH), then the link is stored and the pending create removed, in
//     one transaction with the events' acknowledgement.
//
// An event meeting a pending create that has a record id resumes at step
// 3. One meeting a pending create without a record id cannot tell whether
// step 2 happened: the process stopped between the pending create and the
// record id reaching state (a window of one write into the other system
// and one state commit), or the create failed without a definite answer
// (a lost connection, a 5xx). It is never created again: the contact is
// set aside as a dead letter (operation writeback-create, keyed by the
// contact id) naming the values sent, and its pending create stays, so
// that later events of the contact are not created either; an operator
// checks the other system and links or creates the record by hand. This
// is the residual risk: a contact whose create's outcome is unknown waits
// for a person, never produces a duplicate. A create the other system
// refused with a definite answer (connector.ErrRefused: PostgreSQL's
// SQLSTATE errors, an HTTP 4xx) removes the pending create and is set
// aside like any refusal. A contact deleted before step 3 leaves an
// orphan record, settled by onWorkspaceDelete (orphan.go).

// createJob is a contact whose record exists and awaits step 3.
type createJob struct {
	g       *group
	pending state.PendingCreate
	sent    map[string]any // the record fields sent, when created this round
}

// planCreates starts creates for contacts made in the workspace, and
// resumes the ones a pending create shows under way.
func (b *batch) planCreates(groups []*group) error {
	t, r := b.t, b.r
	for _, g := range groups {
		switch decideGroup(t, g) {
		case vDeletedCreating:
			r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: g.contactID, logfield.Record: g.pending.RecordID}).
				Warn("contact deleted in the workspace while its record was being created; the record is left as it is")
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
		case vResume:
			b.created = append(b.created, &createJob{g: g, pending: *g.pending})
		case vCreateUnknown:
			r.a.deadLetter(t.Name, opCreate, g.contactID, g.newest.Body, fmt.Sprintf(
				"the create of this contact's record (started %s, fields %v) may or may not have been applied; "+
					"check %s and link or create the record by hand: syncd will not create it again",
				g.pending.CreatedAt.Format("2006-01-02T15:04:05Z07:00"), g.pending.Fields, t.Name))
			r.a.count(func(s *Stats) { s.Failed++ })
			r.ack(g)
		case vCreate:
			if err := b.startCreate(g); err != nil {
				return err
			}
		default:
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
		}
	}
	return nil
}

// startCreate writes the pending create and queues the record's create.
func (b *batch) startCreate(g *group) error {
	t, r := b.t, b.r
	ws := t.Mapper.FromContact(g.contact)
	all, err := t.Mapper.ToRecord(ws)
	if err != nil {
		r.failed(t, g, opCreate, err, connector.Permanent)
		return nil
	}
	fields := map[string]any{}
	for k, v := range all {
		if v != nil {
			fields[k] = v // unset fields keep the column's default
		}
	}
	p := state.PendingCreate{Connector: t.Name, ContactID: g.contactID, ContactUpdatedAt: g.contact.UpdatedAt,
		Fields: ws.Only(t.Mapper.ReverseTargets()), Remade: g.remade != nil}
	if err := r.a.opts.Store.Reverse.PutPending(p); err != nil {
		return err
	}
	b.writes = append(b.writes, &write{g: g, pending: p, change: connector.Change{Op: connector.OpCreate, Fields: fields}})
	return nil
}

// stage records, before their commit, the ids of the creates of the
// round's Write call (connector.StageFunc): after a crash, a pending
// create without an id was never committed, and one with a staged id is
// resumed if its record exists, made again if not.
func (b *batch) stage(ids map[int]string) error {
	for i, id := range ids {
		if i < 0 || i >= len(b.writes) || b.writes[i].change.Op != connector.OpCreate {
			return fmt.Errorf("stage: change %d of %d is not a create", i, len(b.writes))
		}
		w := b.writes[i]
		p := w.pending
		p.RecordID, p.Staged = id, true
		if err := b.r.a.opts.Store.Reverse.PutPending(p); err != nil {
			return fmt.Errorf("stage the create of contact %s: %w", w.g.contactID, err)
		}
		w.staged = id
	}
	return nil
}

// settleCreate records a created record's id for step 3, or settles a
// create that failed: refused for good (dispose says Permanent: nothing
// created, set aside, a later version may be created), not applied (its
// Write call failed as a whole, or dispose says Wait without
// connector.ErrOutcomeUnknown: a 429, a spent budget, refused credentials,
// a context that ended before sending; tried again) or of unknown outcome
// (set aside, never created again).
func (b *batch) settleCreate(w *write, res connector.WriteResult) {
	t, r, g, p := b.t, b.r, w.g, w.pending
	if res.Err == nil && res.ID != "" {
		p.RecordID = res.ID
		if err := r.a.opts.Store.Reverse.PutPending(p); err != nil {
			r.a.log.WithError(err).WithField(logfield.Contact, g.contactID).Error("record created but its id could not be written to state")
		}
		b.created = append(b.created, &createJob{g: g, pending: p, sent: w.change.Fields})
		return
	}
	if res.Err == nil {
		res.Err = errors.New("the connector reported no record id")
	}
	d := dispose(res.Err)
	if t.StagesCreates && w.staged != "" && errors.Is(res.Err, connector.ErrOutcomeUnknown) {
		// The commit's answer was lost: its record exists if it went
		// through, as step 3's read tells (finishCreates).
		p.RecordID, p.Staged = w.staged, true
		b.created = append(b.created, &createJob{g: g, pending: p, sent: w.change.Fields})
		return
	}
	if d == connector.Permanent || (d == connector.Wait && !errors.Is(res.Err, connector.ErrOutcomeUnknown)) ||
		(t.StagesCreates && !errors.Is(res.Err, connector.ErrOutcomeUnknown)) {
		// Nothing was created: a later round may try again.
		if err := r.a.opts.Store.Reverse.DeletePending(t.Name, g.contactID); err != nil {
			r.a.log.WithError(err).WithField(logfield.Contact, g.contactID).Error("pending create could not be removed")
		}
		r.failed(t, g, opCreate, res.Err, d)
		return
	}
	// Outcome unknown (connector.ErrOutcomeUnknown), or an error that
	// does not say nothing was sent: the pending create stays (see above).
	r.a.deadLetter(t.Name, opCreate, g.contactID, g.newest.Body,
		"the create may or may not have been applied ("+res.Err.Error()+"); syncd will not create it again: check "+t.Name+" and link the record by hand")
	r.a.count(func(s *Stats) { s.Failed++ })
	r.ack(g)
}

// finishCreates gives each created record's contact its externalId and
// source, then records the link.
func (b *batch) finishCreates(ctx context.Context) error {
	if len(b.created) == 0 {
		return nil
	}
	t, r := b.t, b.r
	records := map[string]connector.Record{}
	if t.Getter != nil {
		ids := make([]string, len(b.created))
		for i, j := range b.created {
			ids[i] = j.pending.RecordID
		}
		recs, err := t.Getter.Get(ctx, ids)
		if err != nil {
			for _, j := range b.created {
				r.failed(t, j.g, opCreate, &wholeCallError{err}, connector.Wait)
			}
			return fmt.Errorf("read %d created records: %w", len(ids), err)
		}
		for _, rec := range recs {
			records[rec.ID] = rec
		}
	}
	var errs []error
	for _, j := range b.created {
		if j.pending.Remade {
			b.finishRemade(j)
			continue
		}
		rec, ok := records[j.pending.RecordID]
		if !ok && j.pending.Staged && t.Getter != nil {
			// Staged, never committed: made again in a later round.
			if err := r.a.opts.Store.Reverse.DeletePending(t.Name, j.g.contactID); err != nil {
				errs = append(errs, fmt.Errorf("drop the pending create of contact %s: %w", j.g.contactID, err))
				continue
			}
			r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: j.g.contactID, logfield.Record: j.pending.RecordID}).
				Info("record staged for a contact made in the workspace was not committed; it is made again")
			r.failed(t, j.g, opCreate, &wholeCallError{fmt.Errorf("created record %s was not committed", j.pending.RecordID)}, connector.Wait)
			continue
		}
		if !ok {
			if t.Getter != nil {
				r.failed(t, j.g, opCreate, fmt.Errorf("created record %s: %w", j.pending.RecordID, connector.ErrNotFound), connector.Permanent)
				continue
			}
			rec = connector.Record{ID: j.pending.RecordID, Fields: j.sent}
		}
		if err := b.finishCreate(ctx, j, rec); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.settleOrphans(ctx, b.orphans); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// finishCreate is step 3 for one contact.
func (b *batch) finishCreate(ctx context.Context, j *createJob, rec connector.Record) error {
	t, r := b.t, b.r
	mapped, merr := t.Mapper.ToContact(rec)
	ext := mapped.ExternalID
	if merr != nil {
		var err error
		if ext, err = t.Mapper.ExternalID(rec); err != nil {
			r.failed(t, j.g, opCreate, fmt.Errorf("record %s was created but gives no externalId: %w", rec.ID, err), connector.Permanent)
			return nil
		}
	}
	var fwd *mapping.Mapped // the record mapped forward, when it maps
	if merr == nil {
		fwd = &mapped
	}
	c, err := r.a.opts.Workspace.UpdateContact(ctx, j.g.contactID, createdPatch(t, j.g.contact, ext, fwd))
	if workspace.IsNotFound(err) {
		// Deleted before its record was linked: an orphan (orphan.go),
		// its deletion's time at most now.
		orphan(t, j.g, j.pending)
		j.g.deletedAt = r.a.opts.Now()
		b.orphans = append(b.orphans, j.g)
		return nil
	}
	if err != nil {
		if workspace.IsUnauthorized(err) || ctx.Err() != nil {
			r.failed(t, j.g, opCreate, &wholeCallError{err}, connector.Wait)
			return err
		}
		// The workspace's answers carry their HTTP status: the same rule
		// as the connectors' writes, and the client's own refusal of an
		// invalid request is permanent too.
		d := connector.Dispose(err)
		if workspace.IsValidation(err) {
			d = connector.Permanent
		}
		r.failed(t, j.g, opCreate, err, d)
		return nil
	}
	rl := createdLink(t, j.pending, c, rec, ext, r.a.opts.Now())
	var edited []state.RecordEdit
	if fwd != nil {
		edited = editsSinceSent(t, j.pending, fwd.Fields, rec)
	}
	if !rec.UpdatedAt.IsZero() {
		rl.Edits = edited // a record without a change time tells none
	}
	r.commit.Links = append(r.commit.Links, rl)
	if len(edited) > 0 || rec.Deleted {
		// The pass leaves a record being made to the write-back (reconcile's
		// creating.go), and may have passed this one's edit already, or
		// its deletion: with no link then, the pass let it go, and the
		// contact would live on alone. Read again once linked, the
		// deletion follows onSourceDelete.
		r.commit.Revisit = append(r.commit.Revisit, state.Revisit{Connector: t.Name, RecordID: rec.ID})
	}
	r.a.count(func(s *Stats) { s.Created++ })
	// Versions newer than the one created from stay in the inbox: the
	// next round applies them as updates of the linked contact.
	for _, e := range j.g.events {
		if !e.ContactUpdatedAt.After(j.pending.ContactUpdatedAt) {
			r.commit.Ack = append(r.commit.Ack, e.Seq)
			r.res.Acked++
		}
	}
	r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: j.g.contactID, logfield.Record: rec.ID, logfield.ExternalID: ext}).
		Info("record created for a contact made in the workspace")
	return nil
}

// createdPatch gives a contact the externalId and source of the record
// created for it and, when the record maps forward (fwd), its sourceUrl
// and its values of the fields flowing only to the workspace: the new
// record's defaults reach the contact now.
func createdPatch(t *Target, contact workspace.Contact, ext string, fwd *mapping.Mapped) workspace.ContactPatch {
	patch := workspace.ContactPatch{ExternalID: workspace.Some(ext), Source: workspace.Some(t.Source)}
	if fwd == nil {
		return patch
	}
	if fwd.SourceURL != "" {
		patch.SourceURL = workspace.Some(fwd.SourceURL)
	}
	only := forwardOnly(t.Mapper)
	have := t.Mapper.FromContact(contact).Only(only)
	body := mapping.PatchBody(have, fwd.Fields.Only(only), mapping.ItemIDs(contact))
	patch.DefaultFields, patch.CustomFields = body.DefaultFields, body.CustomFields
	return patch
}

// createdLink is the link of a contact and the record created for it.
// Agreed: the values sent for targets flowing both ways (what both sides
// held when the record was made), what the contact c holds now for those
// flowing only to the workspace. Not the record as read now: a table edit made
// between the create and its link (a restart between the two, a busy
// round) would be taken as agreed, never patched to the contact, and
// the contact's older value then written back over it (issue 35: the
// poll soak, seed 2, a table edit 0.4 s after syncd's INSERT overwritten
// by the app's create values 11 s later). A record that normalises a
// value it was sent reads as changed: the forward pass patches it to the
// contact once, as does a column default of a target sent empty.
func createdLink(t *Target, p state.PendingCreate, c workspace.Contact, rec connector.Record, ext string, at time.Time) state.ReverseLink {
	m := t.Mapper
	rt := m.ReverseTargets()
	now := m.FromContact(c)
	fields := map[string]string{}
	for _, k := range m.ForwardTargets() {
		v := now[k]
		if contains(rt, k) {
			v = p.Fields[k]
		}
		if v != "" {
			fields[k] = v
		}
	}
	if c.SourceURL != nil && *c.SourceURL != "" {
		fields[sourceURLKey] = *c.SourceURL
	}
	rev := map[string]string{}
	for _, k := range rt {
		if v := p.Fields[k]; v != "" && !contains(m.ForwardTargets(), k) {
			rev[k] = v
		}
	}
	l := state.Link{
		Connector: t.Name, ExternalID: ext, ContactID: p.ContactID, RecordID: rec.ID,
		Fields: fields, ItemIDs: mapping.ItemIDs(c),
		WorkspaceWrittenAt: at, SourceWrittenAt: at,
		ContactUpdatedAt: p.ContactUpdatedAt, SourceUpdatedAt: rec.UpdatedAt,
	}
	l.WorkspaceHash = mapping.Fields(fields).Hash()
	l.SourceHash = l.WorkspaceHash
	return state.ReverseLink{Link: l, Agreed: rev, ClearPending: true}
}

// editsSinceSent are the values of targets flowing both ways that the
// record, as read before its link, holds other than those its create
// sent: edits made in the record since, which the link does not take as
// agreed (createdLink). Each is kept with the record's UpdatedAt as a
// bound of its time (a later edit of another column moves the row's
// updated_at past an app edit made in between; issue 35: the hour-long
// poll soak, a row's last name edited during a restart between the
// create and its link, then weighed at a later company edit's time),
// unless the pass kept an earlier one while the record was being made.
func editsSinceSent(t *Target, p state.PendingCreate, fwd mapping.Fields, rec connector.Record) []state.RecordEdit {
	var es []state.RecordEdit
	for _, k := range t.Mapper.ReverseTargets() {
		if contains(t.Mapper.ForwardTargets(), k) && fwd[k] != p.Fields[k] {
			es = append(es, state.RecordEdit{Target: k, Value: fwd[k], At: rec.UpdatedAt, Since: rec.UpdatedAt, Bound: true})
		}
	}
	return es
}

// forwardOnly are the targets flowing only to the workspace.
func forwardOnly(m *mapping.Mapper) []string {
	rt := m.ReverseTargets()
	var out []string
	for _, k := range m.ForwardTargets() {
		if !contains(rt, k) {
			out = append(out, k)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
