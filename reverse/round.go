package reverse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// Dead-letter operations of the reverse direction.
const (
	opWriteBack = state.OpWriteBack
	opCreate    = "writeback-create"
	opDelete    = "writeback-delete"
	opDecode    = "webhook-event"
	// decodeConnector files dead letters of events that name no connector.
	decodeConnector = "webhook"
)

// RoundResult tells what one round did.
type RoundResult struct {
	Read  int // events read from the inbox
	Acked int // events acknowledged (applied, dropped or set aside)
	Retry int // contacts whose write failed and whose events stay
	// Deferred are contacts whose conflict is left to the forward pass
	// for now (deferToStream): their events stay, with no backoff.
	Deferred int
}

// group is one contact's events of a round.
type group struct {
	contactID string
	events    []state.InboxEvent
	// newest is the version to apply: a deletion if any, else the
	// latest updatedAt (the latest received on a tie).
	newest  state.InboxEvent
	contact workspace.Contact
	deleted bool
	// deletedAt is when the contact was deleted, for a deletion: the
	// event's createdAt, else when it was received.
	deletedAt time.Time
	// versions are the contact's versions received (updates), oldest
	// updatedAt first, for the edit time of each field (editTime).
	versions []workspace.Contact
	// listed are the updatedAt (UnixNano) of the versions known only
	// from a catch-up listing, no delivered event (deferToDeliveries).
	listed, delivered map[int64]bool
	// afterDelete is the journal entry of a record edited since the last
	// sync that the deletion deletes (editafterdelete.go); recordAt the
	// record's UpdatedAt as read then: the delete is conditioned on it, so
	// that an edit made after that read is weighed before any delete.
	afterDelete *state.Conflict
	recordAt    time.Time
	// attempts is the most failed rounds any of the events saw; putOffs
	// the most rounds that put its write-back off (see putOff).
	attempts, putOffs int

	target  *Target
	link    *state.Link
	pending *state.PendingCreate
	// recreate names the connector whose record of the contact is to be
	// created again (state.InboxEvent.Recreate).
	recreate string
	// orphan marks a contact deleted before the record created for it
	// was linked: link is made from pending and never stored (orphan.go).
	orphan bool
	// deletion is syncd's own deletion of the contact, its link gone
	// (deletion.go); remade the journal entry of an app edit that wins
	// over it, the record made again from it.
	deletion *state.ContactDeletion
	remade   *state.Conflict
}

func (g *group) seqs() []uint64 {
	out := make([]uint64, len(g.events))
	for i, e := range g.events {
		out[i] = e.Seq
	}
	return out
}

// round is the work of one Round: what to commit at its end.
type round struct {
	a      *Applier
	commit state.ReverseCommit
	res    RoundResult
}

func (r *round) ack(g *group) {
	r.commit.Ack = append(r.commit.Ack, g.seqs()...)
	r.res.Acked += len(g.events)
}

// Round applies one batch of inbox events.
func (a *Applier) Round(ctx context.Context) (RoundResult, error) {
	evs, err := a.opts.Store.Inbox.Pending(a.opts.BatchSize)
	if err != nil {
		return RoundResult{}, fmt.Errorf("read inbox: %w", err)
	}
	r := &round{a: a, res: RoundResult{Read: len(evs)}}
	if len(evs) == 0 {
		return r.res, nil
	}
	groups := r.group(evs)
	byTarget := map[*Target][]*group{}
	var order []*Target
	for _, g := range groups {
		if err := r.route(g); err != nil {
			return r.res, err
		}
		if g.target != nil {
			if _, seen := byTarget[g.target]; !seen {
				order = append(order, g.target)
			}
			byTarget[g.target] = append(byTarget[g.target], g)
		}
	}
	var errs []error
	for _, t := range order {
		if err := r.applyTarget(ctx, t, byTarget[t]); err != nil {
			errs = append(errs, fmt.Errorf("connector %s: %w", t.Name, err))
		}
	}
	if err := r.flush(); err != nil {
		errs = append(errs, err)
	}
	a.count(func(s *Stats) {
		s.Rounds++
		s.Events += int64(r.res.Acked)
	})
	return r.res, errors.Join(errs...)
}

// flush records what the round settled so far in one transaction.
func (r *round) flush() error {
	c := r.commit
	r.commit = state.ReverseCommit{}
	if err := r.a.opts.Store.Reverse.Commit(c); err != nil {
		r.res.Acked -= len(c.Ack)
		return fmt.Errorf("record applied events: %w", err)
	}
	r.a.count(func(s *Stats) { s.Conflicts += int64(len(c.Conflicts)) })
	for _, rv := range c.Revisit {
		if t := r.a.targets[rv.Connector]; t != nil && t.Revisited != nil {
			t.Revisited()
		}
	}
	return nil
}

// group decodes the events and groups them by contact, in the order of
// each contact's first event. An undecodable event is set aside.
func (r *round) group(evs []state.InboxEvent) []*group {
	byContact := map[string]*group{}
	var out []*group
	for _, e := range evs {
		// Only data is read: the receiver checked no other field of the
		// envelope (createdAt, apiVersion), so none may make it undecodable.
		var env struct {
			CreatedAt time.Time `json:"createdAt"`
			Data      workspace.EventData
		}
		var c workspace.Contact
		err := json.Unmarshal(e.Body, &env)
		if err == nil {
			// data.object as documented, or data.resource (older entries).
			raw, where := env.Data.Payload()
			if where == "" {
				err = errors.New("event carries no contact in data.object or data.resource")
			} else {
				err = json.Unmarshal(raw, &c)
			}
		}
		if err == nil && c.ID == "" {
			err = errors.New("contact without id")
		}
		known := e.Type == workspace.EventContactUpdated || e.Type == workspace.EventContactDeleted
		if err != nil || !known {
			reason := fmt.Sprintf("event type %q is not handled", e.Type)
			if err != nil {
				reason = "undecodable event: " + err.Error()
			}
			r.a.deadLetter(decodeConnector, opDecode, e.ID, e.Body, reason)
			r.commit.Ack = append(r.commit.Ack, e.Seq)
			r.res.Acked++
			continue
		}
		g := byContact[c.ID]
		if g == nil {
			g = &group{contactID: c.ID}
			byContact[c.ID] = g
			out = append(out, g)
		}
		g.events = append(g.events, e)
		if e.Recreate != "" {
			g.recreate = e.Recreate
		}
		if e.Type == workspace.EventContactUpdated {
			i := len(g.versions)
			for i > 0 && g.versions[i-1].UpdatedAt.After(c.UpdatedAt) {
				i--
			}
			g.versions = slices.Insert(g.versions, i, c)
			g.noteListed(e, c)
		}
		g.attempts = max(g.attempts, e.Attempts)
		g.putOffs = max(g.putOffs, e.PutOffs)
		deleted := e.Type == workspace.EventContactDeleted
		newer := len(g.events) == 1 ||
			(deleted && !g.deleted) ||
			(deleted == g.deleted && !c.UpdatedAt.Before(g.contact.UpdatedAt))
		if newer {
			g.newest, g.contact, g.deleted = e, c, deleted
			if g.deletedAt = env.CreatedAt; deleted && g.deletedAt.IsZero() {
				g.deletedAt = e.ReceivedAt
			}
		}
	}
	return out
}

// route finds the connector a contact belongs to: the one linked to it,
// else the one with its pending create, else (for a contact made in the
// app) the first one that creates records. A group no connector acts on
// is acknowledged.
func (r *round) route(g *group) error {
	st := r.a.opts.Store
	for _, t := range r.a.opts.Targets {
		l, ok, err := st.Links.ByContact(t.Name, g.contactID)
		if err != nil {
			return err
		}
		if ok {
			g.target, g.link = t, &l
			return nil
		}
	}
	for _, t := range r.a.opts.Targets {
		p, ok, err := st.Reverse.PendingOf(t.Name, g.contactID)
		if err != nil {
			return err
		}
		if ok {
			g.target, g.pending = t, &p
			if p.Remade {
				return r.routeDeletion(t, g)
			}
			return nil
		}
	}
	if t := r.a.targets[g.recreate]; t != nil && !g.deleted && t.writesBack() {
		// Its record was deleted after the contact was edited, and
		// editAfterDelete lets the edit win: created again.
		g.target = t
		return nil
	}
	for _, t := range r.a.opts.Targets {
		if err := r.routeDeletion(t, g); err != nil || g.deletion != nil {
			return err
		}
	}
	if !g.deleted && !r.a.ownedSource(g.contact) {
		for _, t := range r.a.opts.Targets {
			if t.OnWorkspaceCreate == policy.CreateRecord && t.writesBack() {
				g.target = t
				return nil
			}
		}
	}
	r.a.count(func(s *Stats) { s.Ignored++ })
	r.ack(g)
	return nil
}

// routeDeletion routes g to t when t deleted the contact (deletion.go).
func (r *round) routeDeletion(t *Target, g *group) error {
	d, ok, err := r.a.opts.Store.Reverse.DeletionOf(t.Name, g.contactID)
	if err != nil || !ok {
		return err
	}
	g.target, g.deletion = t, &d
	return nil
}

// ownedSource reports whether the contact's source is one of the
// connectors' (its record exists there: the forward pass links it).
func (a *Applier) ownedSource(c workspace.Contact) bool {
	if c.Source == nil {
		return false
	}
	for _, t := range a.opts.Targets {
		if *c.Source == t.Source {
			return true
		}
	}
	return false
}

// applyTarget settles one connector's groups: decisions, one Write call,
// then the follow-ups of creates; what they settled is recorded before
// the connector's lock is released.
func (r *round) applyTarget(ctx context.Context, t *Target, groups []*group) (err error) {
	if t.Lock != nil {
		t.Lock.Lock()
		defer t.Lock.Unlock()
	}
	defer func() {
		if cerr := r.flush(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	groups, err = r.relink(t, groups)
	if err != nil {
		return err
	}
	var updates, deletes, creates []*group
	for _, g := range groups {
		if g.link == nil && g.deletion != nil && !r.settleDeletion(t, g) {
			continue
		}
		if g.pending != nil && g.pending.Remade {
			g.deleted = false // made again for a deleted contact: never an orphan
		}
		if g.link == nil && g.deleted && g.pending != nil && g.pending.RecordID != "" {
			orphan(t, g, *g.pending)
		}
		switch {
		case g.link != nil && g.deleted:
			deletes = append(deletes, g)
		case g.link != nil:
			updates = append(updates, g)
		default:
			creates = append(creates, g)
		}
	}
	b := &batch{r: r, t: t}
	if err := b.planUpdates(ctx, updates); err != nil {
		return err
	}
	if err := b.planDeletes(ctx, deletes); err != nil {
		return err
	}
	if err := b.planCreates(creates); err != nil {
		return err
	}
	if err := b.write(ctx); err != nil {
		return err
	}
	return b.finishCreates(ctx)
}

// relink reads the groups' links again now that the connector's lock is
// held: route read them before, and a forward pass may have saved newer
// ones since (a link built from the older copy would roll them back). A
// contact whose link a forward pass removed meanwhile is left in the
// inbox for the next round to route again; one linked meanwhile is
// handled as linked.
func (r *round) relink(t *Target, groups []*group) ([]*group, error) {
	out := groups[:0:0]
	for _, g := range groups {
		l, ok, err := r.a.opts.Store.Links.ByContact(t.Name, g.contactID)
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			g.link, g.pending = &l, nil
		case g.link != nil:
			r.res.Retry++
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// batch is one connector's part of a round: the changes of its single
// Write call, each with what its result settles.
type batch struct {
	r      *round
	t      *Target
	writes []*write
	// created are the creates whose record now exists, for finishCreates;
	// orphans those whose contact was deleted before the link (orphan.go).
	created []*createJob
	orphans []*group
	// recEdits are the app's edit times of the values the batch writes
	// into records, by contact: stored before the Write call (see
	// noteWritten).
	recEdits map[string][]state.RecordEdit
}

// write is one change of the round's Write call and what settling its
// result needs: the contact's group and, by the change's Op, the update
// and the values it agrees (OpUpdate) or the pending create and the
// record fields sent (OpCreate).
type write struct {
	change  connector.Change
	g       *group
	u       *update
	agreed  mapping.Fields
	pending state.PendingCreate
	// staged is the id the writer told for the create before its commit
	// (connector.StageFunc), "" when none.
	staged string
}

// write sends the batch's changes in one call and settles each. When the
// call as a whole fails no result can be trusted: the events stay in the
// inbox (creates lose their pending marker: nothing was created, the
// Writer contract says) and the round reports the error.
func (b *batch) write(ctx context.Context) error {
	if len(b.writes) == 0 {
		return nil
	}
	if err := b.r.a.opts.Store.Reverse.PutRecordEditsOf(b.t.Name, b.recEdits); err != nil {
		return fmt.Errorf("store the edit times of the values written back: %w", err)
	}
	for id, es := range b.recEdits {
		b.r.a.log.WithFields(map[string]any{logfield.Contact: id, logfield.RecordEdits: fmt.Sprint(es)}).Debug("app edit times of the values written back kept")
	}
	changes := make([]connector.Change, len(b.writes))
	for i, w := range b.writes {
		changes[i] = w.change
	}
	if b.t.StagesCreates {
		ctx = connector.WithStage(ctx, b.stage)
	}
	res, err := b.t.Writer.Write(ctx, changes)
	if err == nil && len(res) != len(changes) {
		err = fmt.Errorf("writer returned %d results for %d changes", len(res), len(changes))
	}
	if err != nil {
		for _, w := range b.writes {
			b.settle(w, connector.WriteResult{Err: &wholeCallError{err}})
		}
		return fmt.Errorf("write %d changes: %w", len(changes), err)
	}
	for i, w := range b.writes {
		b.settle(w, res[i])
	}
	return nil
}

// settle carries out what a change's result means for its contact.
func (b *batch) settle(w *write, res connector.WriteResult) {
	switch w.change.Op {
	case connector.OpUpdate:
		b.settleUpdate(w, res)
	case connector.OpDelete:
		b.settleDelete(w, res)
	case connector.OpCreate:
		b.settleCreate(w, res)
	}
}

// wholeCallError marks a change whose Write call failed as a whole.
type wholeCallError struct{ err error }

func (e *wholeCallError) Error() string { return e.err.Error() }
func (e *wholeCallError) Unwrap() error { return e.err }

// dispose is what becomes of a change whose write failed with err:
// connector.Dispose's rule, the one every writer follows, except that a
// change whose Write call failed as a whole waits (the Writer contract:
// none of the call's results can be trusted, and the connector is
// likely down).
func dispose(err error) connector.Disposition {
	var whole *wholeCallError
	if errors.As(err, &whole) {
		return connector.Wait
	}
	return connector.Dispose(err)
}

// failed handles a contact whose write failed, as d says:
//
//   - Wait: its events stay in the inbox for the next round, and no
//     attempt is counted (the system is not taking writes now).
//   - Retry (and Postpone, outside settleUpdate): they stay, and the
//     attempt is counted; once MaxAttempts rounds failed they are set
//     aside as a dead letter and acknowledged.
//   - Permanent: they are set aside at once, the dead letter naming the
//     system's message and field (connector.Explain).
func (r *round) failed(t *Target, g *group, op string, err error, d connector.Disposition) {
	if d == connector.Wait {
		r.res.Retry++
		r.a.count(func(s *Stats) { s.Retried++ })
		var whole *wholeCallError
		if !errors.As(err, &whole) { // a failed call is reported by the round
			r.a.log.WithError(err).WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: g.contactID}).
				Warn("write-back waits: the other system takes no writes now; the event stays in the inbox")
		}
		return
	}
	attempts := g.attempts + 1
	if d != connector.Permanent && attempts < r.a.opts.MaxAttempts {
		for _, e := range g.events {
			e.Attempts = attempts
			if uerr := r.a.opts.Store.Inbox.Update(e); uerr != nil && !errors.Is(uerr, state.ErrNotFound) {
				r.a.log.WithError(uerr).WithField(logfield.Event, e.ID).Warn("could not count a failed attempt")
			}
		}
		r.res.Retry++
		r.a.count(func(s *Stats) { s.Retried++ })
		r.a.log.WithError(err).WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: g.contactID, logfield.Attempt: attempts}).
			Warn("write-back failed; the event stays in the inbox")
		return
	}
	r.a.deadLetter(t.Name, op, g.contactID, g.newest.Body, connector.Explain(err))
	r.a.count(func(s *Stats) { s.Failed++ })
	r.ack(g)
}

// putOff handles a write-back the connector put off because the record
// changed since it was read (connector.ErrChanged): its events stay in the
// inbox for the next round, which reads the record again and decides
// anew. A contact put off MaxPutOffs times (the record keeps changing
// between the read and the write, or the connector cannot compare its
// change times) is set aside as a dead letter naming the record and the
// count, and counted in Stats.PutOffDeadLetters: never an endless retry.
func (r *round) putOff(t *Target, g *group, recordID string, err error) {
	n := g.putOffs + 1
	r.a.count(func(s *Stats) { s.PutOffs++ })
	fields := map[string]any{"connector": t.Name, "contact": g.contactID, "record": recordID, "put_offs": n, "max_put_offs": r.a.opts.MaxPutOffs}
	if n >= r.a.opts.MaxPutOffs {
		r.a.deadLetter(t.Name, opWriteBack, g.contactID, g.newest.Body, fmt.Sprintf(
			"the write-back to record %s was put off %d times: each time %s reported the record changed between its read and the write (%v); "+
				"check what keeps changing the record (or whether %s's change times can be compared); the next change of the contact is written again",
			recordID, n, t.Name, err, t.Name))
		r.a.count(func(s *Stats) {
			s.Failed++
			s.PutOffDeadLetters++
		})
		r.ack(g)
		return
	}
	for _, e := range g.events {
		e.PutOffs = n
		if uerr := r.a.opts.Store.Inbox.Update(e); uerr != nil && !errors.Is(uerr, state.ErrNotFound) {
			r.a.log.WithError(uerr).WithField(logfield.Event, e.ID).Warn("could not count a put-off write-back")
		}
	}
	r.res.Retry++
	r.a.count(func(s *Stats) { s.Retried++ })
	entry := r.a.log.WithError(err).WithFields(fields)
	if n == 1 {
		entry.Info("record changed while its write-back was decided; deciding again next round")
		return
	}
	entry.Warn("record changed again while its write-back was decided; deciding again next round, until the bound sets it aside")
}

// deadLetter records a set-aside event; a failure to record it is logged
// (the event is acknowledged all the same: it cannot be applied).
func (a *Applier) deadLetter(conn, op, key string, payload []byte, reason string) {
	_, err := a.opts.Store.DeadLetters.Add(state.DeadLetter{Connector: conn, Operation: op, Key: key, Payload: payload, Reason: reason})
	entry := a.log.WithFields(map[string]any{logfield.Connector: conn, logfield.Operation: op, logfield.Key: key, logfield.Reason: reason})
	if err != nil {
		entry.WithError(err).Error("dead letter could not be recorded")
		return
	}
	entry.Warn("workspace change set aside as a dead letter")
}
