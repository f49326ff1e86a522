package reverse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
)

// sourceURLKey is the sourceUrl pseudo-field of Link.Fields.
const sourceURLKey = "sourceUrl"

// update is the plan of one linked contact's new version.
type update struct {
	g *group
	// ws are the contact's canonical values; base the values last agreed
	// (Link.Fields plus the reverse-only values).
	ws, base mapping.Fields
	// changed are the reverse targets whose workspace value differs
	// from base.
	changed  []string
	recordID string
	// warned are the targets whose record value did not map when a pass
	// last read the record (state.FieldWarning): the record's text for
	// them is never written over (see mergeUpdate).
	warned map[string]bool
	// recEdits are the record's own edit times of targets a change
	// stream told the forward direction (state.RecordEdit); appEdits the
	// app's, learnt from stale versions (noteStale).
	recEdits, appEdits map[string]state.RecordEdit
	// now is when the update is weighed (the applier's clock).
	now time.Time
	// flight are the app edits the contact's last forward patch
	// overwrote unweighed (flight.go).
	flight map[string]flightEdit
}

// planUpdates settles each linked contact's new version by its verdict:
// dropped (older than applied, or the connector does not write back), an
// echo recorded, or the fields that differ from what the record holds
// written, with conflicts settled by policy.
func (b *batch) planUpdates(ctx context.Context, groups []*group) error {
	t, r := b.t, b.r
	var work []*update
	for _, g := range groups {
		var u *update
		v := decideGroup(t, g)
		if fe := b.flightEdits(g); len(fe) > 0 && (v == vStale || v == vCompare) && t.writesBack() {
			var err error
			if u, err = b.flightUpdate(g, fe); err != nil {
				return err
			}
			v = decideUpdate(u)
		} else if v == vCompare {
			var err error
			if u, err = b.compare(g); err != nil {
				return err
			}
			v = decideUpdate(u)
		}
		switch v {
		case vIgnore:
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
		case vStale:
			b.noteStale(g)
			r.a.count(func(s *Stats) { s.Stale++ })
			r.ack(g)
		case vEcho:
			r.a.count(func(s *Stats) { s.Echoes++ })
			b.record(u, u.base, false)
		case vNoRecordID:
			r.failed(t, g, opWriteBack, errors.New("the link holds no record id (made by a listing); run a forward pass or syncd resync first"), connector.Permanent)
		case vWrite:
			work = append(work, u)
		}
	}
	if len(work) == 0 {
		return nil
	}
	records, err := b.readRecords(ctx, work)
	if err != nil {
		return err
	}
	for _, u := range work {
		var rec *connector.Record
		if t.Getter != nil {
			if rec = records[u.recordID]; rec == nil || rec.Deleted {
				r.failed(t, u.g, opWriteBack, fmt.Errorf("record %s: %w", u.recordID, connector.ErrNotFound), connector.Permanent)
				continue
			}
		}
		b.planWrite(u, rec)
	}
	return nil
}

// readRecords reads the records the updates write to, in one call, when
// the connector can read records (else it returns nil). When the read
// fails every update is retried next round.
func (b *batch) readRecords(ctx context.Context, work []*update) (map[string]*connector.Record, error) {
	t := b.t
	if t.Getter == nil {
		return nil, nil
	}
	ids := make([]string, len(work))
	for i, u := range work {
		ids[i] = u.recordID
	}
	recs, err := t.Getter.Get(ctx, ids)
	if err != nil {
		for _, u := range work {
			b.r.failed(t, u.g, opWriteBack, &wholeCallError{err}, connector.Wait)
		}
		return nil, fmt.Errorf("read %d records: %w", len(ids), err)
	}
	records := make(map[string]*connector.Record, len(recs))
	for i := range recs {
		records[recs[i].ID] = &recs[i]
	}
	return records, nil
}

// compare reads a linked contact's values against what was agreed.
func (b *batch) compare(g *group) (*update, error) {
	t := b.t
	fwd := forwardSet(t.Mapper)
	agreedRev, err := b.r.a.opts.Store.Reverse.Agreed(t.Name, g.contactID)
	if err != nil {
		return nil, err
	}
	base := mapping.Fields{}
	for k, v := range g.link.Fields {
		base[k] = v
	}
	for k, v := range agreedRev {
		if !fwd[k] {
			base[k] = v
		}
	}
	u := &update{g: g, ws: t.Mapper.FromContact(g.contact), base: base, recordID: g.link.RecordID, now: b.r.a.opts.Now()}
	if u.recEdits, err = b.r.a.opts.Store.Reverse.RecordEdits(t.Name, g.contactID); err != nil {
		return nil, err
	}
	if u.appEdits, err = b.r.a.opts.Store.Reverse.AppEdits(t.Name, g.contactID); err != nil {
		return nil, err
	}
	fws, err := b.r.a.opts.Store.FieldWarnings.Of(t.Name, g.link.ExternalID)
	if err != nil {
		return nil, err
	}
	for _, w := range fws {
		if u.warned == nil {
			u.warned = map[string]bool{}
		}
		u.warned[w.Field] = true
	}
	for _, k := range t.Mapper.ReverseTargets() {
		if u.ws[k] != base[k] {
			u.changed = append(u.changed, k)
		}
	}
	if u.recordID == "" {
		// A link made by a listing has no record id; when the record's
		// id is the externalId, it is known all the same.
		if _, err := t.Mapper.ExternalID(connector.Record{ID: g.link.ExternalID}); err == nil {
			u.recordID = g.link.ExternalID
		}
	}
	return u, nil
}

// merge is what a write-back decides for one contact: what the record
// holds (cur), what it should hold (want), the values then agreed, and
// the conflict settled by policy, if both sides changed a field.
type merge struct {
	cur, want, agreed mapping.Fields
	conflict          *state.Conflict
	// other is the conflict of the fields the other side won, when the
	// fields' own edit times split them.
	other *state.Conflict
	// appAt is when the app edited a field in conflict (the last one
	// weighed), for the log.
	appAt time.Time
	// revisit is set when the record won a field: the forward direction
	// reads the record again to bring its value to the contact.
	revisit bool
	// src is the record's forward-mapped values, when it was read.
	src mapping.Fields
	// deferred is set when a conflict the record won by its row time is
	// left to the forward pass (deferToStream), or one the app won by a
	// catch-up listing's version to the service's redelivery of the
	// versions missed (deferToDeliveries, awaitDeliveries set).
	deferred, awaitDeliveries bool
}

// editTime is when the app's edit of target k to v was made, as far as
// the contact's versions received tell: the updatedAt of the earliest of
// the versions, going back from the newest, that all hold v.
func editTime(m *mapping.Mapper, g *group, k, v string) time.Time {
	if i := firstHolding(m, g, k, v); i >= 0 {
		return g.versions[i].UpdatedAt
	}
	return g.contact.UpdatedAt
}

// firstHolding is the index in g.versions of the earliest of the
// versions, going back from the one applied, that all hold v for target
// k; -1 when the newest does not.
func firstHolding(m *mapping.Mapper, g *group, k, v string) int {
	first := -1
	for i := len(g.versions) - 1; i >= 0; i-- {
		c := g.versions[i]
		if c.UpdatedAt.After(g.contact.UpdatedAt) {
			continue // newer than the version applied (a deletion's)
		}
		if m.FromContact(c)[k] != v {
			break
		}
		first = i
	}
	return first
}

// mergeUpdate decides a write-back; rec is nil when the connector cannot
// read records. It reads and writes nothing.
func mergeUpdate(t *Target, u *update, rec *connector.Record) merge {
	fwd := forwardSet(t.Mapper)
	rt := t.Mapper.ReverseTargets()
	// cur is what the record holds, as far as it can be known: its
	// forward-mapped values for targets flowing both ways, the agreed
	// values otherwise.
	cur := mapping.Fields{}
	for _, k := range rt {
		cur[k] = u.base[k]
	}
	var src mapping.Fields
	// keep are the targets whose record value does not map (a phone
	// number that is not one): the contact lacks it because the record's
	// text was left out, so the contact's value must never replace that
	// text. The record as read now tells; else what the last pass saw.
	keep := u.warned
	if rec != nil {
		if m, err := t.Mapper.ToContact(*rec); err == nil {
			src = m.Fields
			keep = map[string]bool{}
			for _, k := range m.WarnedTargets() {
				keep[k] = true
			}
			for _, k := range rt {
				if fwd[k] {
					cur[k] = src[k]
				}
			}
		}
	}
	conflict := map[string]bool{}
	for _, k := range u.changed {
		if keep[k] {
			continue
		}
		if src != nil && fwd[k] && src[k] != u.base[k] && src[k] != u.ws[k] {
			conflict[k] = true
		}
	}
	m := merge{cur: cur.Only(rt), want: cur.Only(rt), agreed: copyFields(u.base), src: src}
	// Each field's app edit is weighed at its own time: that of the first
	// of the contact's versions received that holds the value, not that
	// of the newest, which may be a later edit of another field or the
	// echo of syncd's own write (see editTime).
	recordWins := map[string]bool{}
	for k := range conflict {
		winner := "workspace"
		m.appAt = u.appEditAt(t.Mapper, k)
		recAt := u.recordEditAt(k, src[k], rec)
		if !wins(t.Conflict, m.appAt, rec, recAt) {
			recordWins[k], winner = true, t.Name
			if u.deferToStream(t, k, src, rec) {
				m.deferred = true
			}
		} else if rec != nil && u.deferToDeliveries(t, k, recAt) {
			m.deferred, m.awaitDeliveries = true, true
		}
		cf := m.conflict
		if cf == nil || cf.Winner != winner {
			if m.other == nil || m.other.Winner != winner {
				cf = &state.Conflict{Connector: t.Name, ExternalID: u.g.link.ExternalID, ContactID: u.g.contactID,
					Policy: t.Conflict.String(), Winner: winner, Workspace: map[string]string{}, Source: map[string]string{}}
				if m.conflict == nil {
					m.conflict = cf
				} else {
					m.other = cf
				}
			} else {
				cf = m.other
			}
		}
		cf.Workspace[k], cf.Source[k] = u.ws[k], src[k]
	}
	for _, k := range u.changed {
		if keep[k] {
			continue // the record's text stays; a fix at the source maps again
		}
		if recordWins[k] {
			// The record's value stays and the forward pass brings it
			// over. The link agrees on the app's losing value: a later
			// look at the contact (the pass reads it before patching)
			// must not take that value for an app edit not yet weighed,
			// at a later version's time, and keep it (issue 35: the
			// logical 60-minute soak, a true race left with each side's
			// value, the pass keeping the app's and the write-back the
			// record's).
			m.agreed[k] = u.ws[k]
			m.revisit = true
			continue
		}
		m.want[k] = u.ws[k]
		m.agreed[k] = u.ws[k]
	}
	if src != nil {
		m.weighOverwritten(t, u, src, rec)
	}
	m.weighFlight(t, u, src, rec)
	return m
}

// weighOverwritten weighs the app edits that a newer version of the
// contact replaced with the record's own value: a forward patch of the
// record's change that landed on an app edit it had not weighed, syncd
// stopped before it could (a SIGKILL between the patch and its link).
// Taking the newest version as the app's would drop the app's edit for
// good (issue 35: the logical soak, seed 2, an app edit 12 s after the
// table's, gone from both sides). Each such field is a conflict between
// the app's value, at its own time (the first version holding it), and
// the record's: when the app wins, its value is written to the record
// and the link keeps the contact's current value, so that the forward
// pass then brings the record's (the app's) value back to the contact.
func (m *merge) weighOverwritten(t *Target, u *update, src mapping.Fields, rec *connector.Record) {
	fwd := forwardSet(t.Mapper)
	var vs []mapping.Fields // the versions mapped, once, when a field needs them
	for _, k := range u.changed {
		if !fwd[k] || u.ws[k] != src[k] || src[k] == u.base[k] {
			continue // not the record's change over the contact
		}
		if vs == nil {
			vs = make([]mapping.Fields, len(u.g.versions))
			for i, c := range u.g.versions {
				vs[i] = t.Mapper.FromContact(c)
			}
		}
		app, at, ok := overwrittenApp(u.g, vs, k, u.ws[k], u.base[k])
		if !ok {
			continue
		}
		winner := t.Name
		if wins(t.Conflict, at, rec, u.recordEditAt(k, src[k], rec)) {
			winner = "workspace"
			m.want[k] = app
		}
		m.journal(t, u, winner, k, app, src[k])
		m.appAt = at
	}
}

// journal adds the conflict of target k, the app's value app against
// the record's rec, won by winner, to the merge's entry of that winner.
func (m *merge) journal(t *Target, u *update, winner, k, app, rec string) {
	cf := &state.Conflict{Connector: t.Name, ExternalID: u.g.link.ExternalID, ContactID: u.g.contactID,
		Policy: t.Conflict.String(), Winner: winner, Workspace: map[string]string{k: app}, Source: map[string]string{k: rec}}
	switch {
	case m.conflict == nil:
		m.conflict = cf
	case m.conflict.Winner == winner:
		m.conflict.Workspace[k], m.conflict.Source[k] = app, rec
	case m.other == nil:
		m.other = cf
	default:
		m.other.Workspace[k], m.other.Source[k] = app, rec
	}
}

// overwrittenApp returns the app's value of target k that the newest
// version (holding newest) replaced, and its edit time: that of the
// newest older version holding another value than newest, when that is
// not the agreed value base (then the app did not change k before).
// vs are the group's versions mapped (FromContact), in g.versions' order.
func overwrittenApp(g *group, vs []mapping.Fields, k, newest, base string) (app string, at time.Time, ok bool) {
	since := g.link.ContactUpdatedAt
	for i := len(g.versions) - 1; i >= 0; i-- {
		c := g.versions[i]
		if c.UpdatedAt.After(g.contact.UpdatedAt) {
			continue
		}
		if !c.UpdatedAt.After(since) {
			return "", time.Time{}, false
		}
		v := vs[i][k]
		if v == newest {
			continue
		}
		if v == base {
			return "", time.Time{}, false
		}
		app, at = v, c.UpdatedAt
		for j := i - 1; j >= 0 && g.versions[j].UpdatedAt.After(since) && vs[j][k] == v; j-- {
			at = g.versions[j].UpdatedAt
		}
		return app, at, true
	}
	return "", time.Time{}, false
}

// planWrite queues the update of the fields the record does not hold
// yet, and records the conflict it settled; rec is nil when the
// connector cannot read records.
func (b *batch) planWrite(u *update, rec *connector.Record) {
	t, r := b.t, b.r
	m := mergeUpdate(t, u, rec)
	b.observe(u, rec, m.src)
	if m.deferred {
		r.res.Deferred++
		log := r.a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Contact: u.g.contactID, logfield.RecordEditAt: rec.UpdatedAt})
		if m.awaitDeliveries {
			log.Debug("conflict the app wins by a catch-up listing's version left for the missed deliveries; the events stay")
		} else {
			log.Debug("conflict left to the forward pass, which reads the row's versions; the events stay")
		}
		return
	}
	for _, cf := range []*state.Conflict{m.conflict, m.other} {
		if cf == nil {
			continue
		}
		r.commit.Conflicts = append(r.commit.Conflicts, *cf)
		f := map[string]any{logfield.Connector: t.Name, logfield.Contact: u.g.contactID, logfield.Policy: t.Conflict, logfield.Winner: cf.Winner,
			logfield.AppEditAt: m.appAt}
		if rec != nil {
			f[logfield.RecordEditAt] = rec.UpdatedAt
		}
		r.a.log.WithFields(f).Info("both sides changed since the last sync; conflict settled by policy")
	}
	if m.revisit && u.recordID != "" {
		// The pass that brings the record's value may have read this
		// version of the record already, before the app's edit reached
		// the write-back, and kept the app's value for it: its changes
		// feed will not show the record again (issue 35: the logical
		// soak, seed 5, each side left with its own first name).
		r.commit.Revisit = append(r.commit.Revisit, state.Revisit{Connector: t.Name, RecordID: u.recordID})
	}
	fields, err := t.Mapper.RecordChanges(m.cur, m.want)
	if err != nil {
		r.failed(t, u.g, opWriteBack, err, connector.Permanent)
		return
	}
	if len(fields) == 0 {
		r.a.count(func(s *Stats) { s.Unchanged++ })
		b.record(u, m.agreed, false)
		return
	}
	b.noteWritten(u, m)
	ch := connector.Change{Op: connector.OpUpdate, ID: u.recordID, Fields: fields}
	if rec != nil {
		// The decision holds only for the record as read: a table edit
		// made since must not be overwritten unseen.
		ch.IfUnchangedSince = rec.UpdatedAt
	}
	b.writes = append(b.writes, &write{change: ch, g: u.g, u: u, agreed: m.agreed})
}

// settleUpdate records a written update; a failed one is put off (the
// record changed since it was read), kept for the next round or set aside,
// as dispose says.
func (b *batch) settleUpdate(w *write, res connector.WriteResult) {
	t, r := b.t, b.r
	if res.Err != nil {
		if d := dispose(res.Err); d == connector.Postpone {
			b.restoreEdits(w.u)
			r.putOff(t, w.g, w.change.ID, res.Err)
		} else {
			r.failed(t, w.g, opWriteBack, res.Err, d)
		}
		return
	}
	r.a.count(func(s *Stats) { s.Written++ })
	b.record(w.u, w.agreed, true)
}

// wins reports whether the workspace's version wins a conflict with the
// record's edit made at recAt.
func wins(conflict policy.Conflict, contactAt time.Time, rec *connector.Record, recAt time.Time) bool {
	if rec == nil {
		return conflict != policy.CRMWins
	}
	return conflict.WorkspaceWins(contactAt, recAt)
}

// recordEditAt is when the record's value v of target k was edited: the
// time the forward direction learnt from a change stream (the row's
// updated_at moved on with an edit of another column since), while the
// record still holds v; else the record's UpdatedAt.
func (u *update) recordEditAt(k, v string, rec *connector.Record) time.Time {
	if rec == nil {
		return time.Time{}
	}
	if e, ok := u.recEdits[k]; ok && e.Holds(v, u.g.link.SourceUpdatedAt) && e.At.Before(rec.UpdatedAt) {
		return e.At
	}
	return rec.UpdatedAt
}

// appEditAt is when the app edited target k to the contact's value: the
// first version received holding it (editTime), or earlier when a stale
// version told (noteStale).
func (u *update) appEditAt(m *mapping.Mapper, k string) time.Time {
	at := editTime(m, u.g, k, u.ws[k])
	if e, ok := u.appEdits[k]; ok && e.Holds(u.ws[k], u.g.link.ContactUpdatedAt) && e.At.Before(at) {
		return e.At
	}
	return at
}

// noteStale keeps, before a stale group is dropped, when the app made the
// values it holds that differ from what the link agrees (state.Reverse's
// AppEdits): syncd's patch of other fields made the versions stale, but
// the app's edits of these fields are still to be weighed, and the
// versions that come next (the patch's echo) are later than the edits
// (issue 35: the poll soak, a row's newer company lost to an app edit
// weighed at the time of syncd's own patch). A write only when a value
// is first seen.
func (b *batch) noteStale(g *group) {
	t := b.t
	if g.link == nil || g.deleted {
		return
	}
	cur, err := b.r.a.opts.Store.Reverse.AppEdits(t.Name, g.contactID)
	if err != nil {
		return
	}
	ws := t.Mapper.FromContact(g.contact)
	fwd := forwardSet(t.Mapper)
	since := g.link.ContactUpdatedAt
	var es []state.RecordEdit
	for _, k := range t.Mapper.ReverseTargets() {
		v := ws[k]
		if !fwd[k] || v == g.link.Fields[k] {
			continue
		}
		at := editTime(t.Mapper, g, k, v)
		if e, ok := cur[k]; ok && e.HeldBy(v, since, at) {
			continue
		}
		es = append(es, state.RecordEdit{Target: k, Value: v, At: at, Since: since})
	}
	if err := b.r.a.opts.Store.Reverse.PutAppEdits(t.Name, g.contactID, es); err != nil {
		b.r.a.log.WithError(err).WithField(logfield.Contact, g.contactID).Warn("app edit times could not be stored")
	}
}

// streamWait bounds how long after a row's change a conflict it wins by
// its row time is left to the forward pass (deferToStream). The wait
// ends as soon as the pass reads the row's version, which tells the
// field's own time; the bound is for a stream that stopped. 30 s was too
// short: at 12 edits/s against the workspace's 10 requests/s the pass
// runs up to a minute behind the stream, and the row's time then decided
// (issue 35: the logical hour-long soak, 47 app edits journaled as lost).
const streamWait = 5 * time.Minute

// deferToStream reports whether a conflict on target k, which the record
// wins by the row's updated_at, is better left to the forward pass for
// now: the connector streams (the pass has every version of the row and
// weighs each field at its own time), the pass has not synced this
// version of the row yet, no time of the field's own is known, and the
// row changed other fields too since the link (so its updated_at may be
// another column's). Left so for streamWait at most: a pass that lags
// more, the row's time decides (issue 35: the last journaled losses, the
// write-back weighing before the pass had read the row's versions).
func (u *update) deferToStream(t *Target, k string, src mapping.Fields, rec *connector.Record) bool {
	if t.Streams == nil || rec == nil || !u.g.link.SourceUpdatedAt.Before(rec.UpdatedAt) || u.now.Sub(rec.UpdatedAt) > streamWait || !t.Streams() {
		return false
	}
	if e, ok := u.recEdits[k]; ok && !e.Bound && e.Holds(src[k], u.g.link.SourceUpdatedAt) && e.At.Before(rec.UpdatedAt) {
		return false // a time of the field's own (not a row's, as observe keeps it)
	}
	for _, o := range t.Mapper.ForwardTargets() {
		if o != k && src[o] != u.g.link.Fields[o] {
			return true
		}
	}
	return false
}

// deliveryWait bounds how long after a catch-up listing's version a
// conflict the app wins by that version's time is left for the missed
// deliveries (deferToDeliveries). The service retries a failed delivery
// on a schedule it does not publish (workspace/FACTS.md); a delivery it
// gave up on leaves the listing's time to decide.
const deliveryWait = 2 * time.Minute

// deferToDeliveries reports whether a conflict on target k, which the app
// wins over the record's edit at recAt, is better left for now: the
// earliest version holding the app's value is known only from a catch-up
// listing (syncd was down when the versions before it were delivered),
// so the app made that value at some time between the version syncd knew
// before and the listed one, whose updatedAt may be a later edit of
// another field; and the record's edit falls in between, so that the
// policy would settle it the other way at the earliest of those times.
// The service delivers the missed versions again, and the first of them
// holding the value tells its time (issue 35: the binlog soak, seed 9, a
// table edit lost to an app edit made 3.3 s before it, whose delivery
// failed while syncd was down, weighed at a later edit's time). Left so
// for deliveryWait at most after the listed version.
func (u *update) deferToDeliveries(t *Target, k string, recAt time.Time) bool {
	g := u.g
	i := firstHolding(t.Mapper, g, k, u.ws[k])
	if i < 0 || !g.listed[g.versions[i].UpdatedAt.UnixNano()] || u.now.Sub(g.versions[i].UpdatedAt) > deliveryWait {
		return false
	}
	if u.appEditAt(t.Mapper, k).Before(g.versions[i].UpdatedAt) {
		return false // an earlier time known (noteStale)
	}
	prev := g.link.ContactUpdatedAt
	if i > 0 {
		prev = g.versions[i-1].UpdatedAt
	}
	return !t.Conflict.WorkspaceWins(prev.Add(time.Millisecond), recAt)
}

// noteWritten keeps, for the app's values the write-back is about to
// write into the record, when the app made them (state.RecordEdit): the
// row's updated_at will be the time of syncd's write, later than the
// app's edit. A SIGKILL before the round's commit leaves the forward
// pass a row holding the app's older value at that later time: weighed
// at it, the older value beat a newer app edit of the same field (the
// poll soak, an app's last name overwritten by its own value of 6.8 s
// before). Stored in one transaction before the Write call.
func (b *batch) noteWritten(u *update, m merge) {
	fwd := forwardSet(b.t.Mapper)
	for _, k := range b.t.Mapper.ReverseTargets() {
		v := m.want[k]
		if !fwd[k] || v == m.cur[k] || v != u.ws[k] {
			continue
		}
		if b.recEdits == nil {
			b.recEdits = map[string][]state.RecordEdit{}
		}
		b.recEdits[u.g.contactID] = append(b.recEdits[u.g.contactID],
			state.RecordEdit{Target: k, Value: v, At: u.appEditAt(b.t.Mapper, k), Since: u.g.link.SourceUpdatedAt})
	}
}

// restoreEdits puts back the record edit times noteWritten replaced
// with the app's, for a write-back the connector put off: the record
// was not written and still holds its own values, whose times the next
// round weighs. Lost, the record's value read before was weighed at the
// updated_at the edit that put the write off had moved (issue 35: the
// hour-long poll soak at 3fdbcdf, finding 2: an app company edit 8.7 s
// newer than the row's, lost to it).
func (b *batch) restoreEdits(u *update) {
	var es []state.RecordEdit
	for _, e := range b.recEdits[u.g.contactID] {
		if prev, ok := u.recEdits[e.Target]; ok {
			es = append(es, prev)
		}
	}
	if len(es) == 0 {
		return
	}
	if err := b.r.a.opts.Store.Reverse.PutRecordEdits(b.t.Name, u.g.contactID, es); err != nil {
		b.r.a.log.WithError(err).WithField(logfield.Contact, u.g.contactID).Warn("record edit times could not be restored")
	}
}

// observe records, for the fields the record changed since the link's
// version and not yet synced, that the record held its value at its
// UpdatedAt already (state.RecordEdit, a Bound: the value's own time, a
// stream's, is at or before it), unless an earlier time is known:
// a later edit of another column moves the row's updated_at, and a
// conflict with an app edit made in between is then weighed at this
// time, by either direction. A write only when a changed value is first
// seen.
func (b *batch) observe(u *update, rec *connector.Record, src mapping.Fields) {
	t := b.t
	if rec == nil || rec.UpdatedAt.IsZero() || src == nil {
		return
	}
	fwd := forwardSet(t.Mapper)
	since := u.g.link.SourceUpdatedAt
	var es []state.RecordEdit
	for _, k := range t.Mapper.ReverseTargets() {
		v := src[k]
		if !fwd[k] || v == u.base[k] {
			continue
		}
		if e, ok := u.recEdits[k]; ok && e.HeldBy(v, since, rec.UpdatedAt) {
			continue
		}
		es = append(es, state.RecordEdit{Target: k, Value: v, At: rec.UpdatedAt, Since: since, Bound: true})
	}
	if len(es) == 0 {
		return
	}
	if err := b.r.a.opts.Store.Reverse.PutRecordEdits(t.Name, u.g.contactID, es); err != nil {
		b.r.a.log.WithError(err).WithField(logfield.Contact, u.g.contactID).Warn("record edit times could not be stored")
		return
	}
	b.r.a.log.WithFields(map[string]any{logfield.Contact: u.g.contactID, logfield.RecordEdits: fmt.Sprint(es)}).Debug("record edit times kept")
	if u.recEdits == nil {
		u.recEdits = map[string]state.RecordEdit{}
	}
	for _, e := range es {
		u.recEdits[e.Target] = e
	}
}

// record queues the link holding the newly agreed values and the
// acknowledgement of the contact's events.
func (b *batch) record(u *update, agreed mapping.Fields, wrote bool) {
	t := b.t
	fwd := forwardSet(t.Mapper)
	l := *u.g.link
	l.Fields = map[string]string{}
	rev := map[string]string{}
	for k, v := range agreed {
		switch {
		case v == "":
		case fwd[k]:
			l.Fields[k] = v
		default:
			rev[k] = v
		}
	}
	l.RecordID = u.recordID
	l.ItemIDs = mapping.ItemIDs(u.g.contact)
	l.WorkspaceHash = mapping.Fields(l.Fields).Hash()
	l.SourceHash = l.WorkspaceHash
	if !u.g.contact.UpdatedAt.Before(l.ContactUpdatedAt) {
		l.ContactUpdatedAt = u.g.contact.UpdatedAt // a flight edit's version may be stale
	}
	if wrote {
		l.SourceWrittenAt = b.r.a.opts.Now()
	}
	if u.g.attempts > 0 {
		_ = b.r.a.opts.Store.DeadLetters.Clear(t.Name, opWriteBack, u.g.contactID)
	}
	b.r.commit.Links = append(b.r.commit.Links, state.ReverseLink{Link: l, Agreed: rev})
	b.r.ack(u.g)
}

// planDeletes follows onWorkspaceDelete for linked contacts deleted in
// the workspace.
func (b *batch) planDeletes(ctx context.Context, groups []*group) error {
	t, r := b.t, b.r
	var dels []*group
	for _, g := range groups {
		if decideGroup(t, g) == vDelete {
			dels = append(dels, g)
		}
	}
	dels, err := b.editsAfterDelete(ctx, dels)
	if err != nil {
		return err
	}
	if dels, err = b.guardDeletes(dels); err != nil {
		return err
	}
	allowed := make(map[*group]bool, len(dels))
	for _, g := range dels {
		allowed[g] = true
	}
	for _, g := range groups {
		v := decideGroup(t, g)
		if v == vDelete && !allowed[g] {
			continue // held, or kept by editAfterDelete
		}
		switch v {
		case vUnlink:
			b.unlink(g)
			r.a.count(func(s *Stats) { s.Unlinked++ })
			r.ack(g)
		case vNoDeleteID:
			r.failed(t, g, opDelete, errors.New("the link holds no record id; delete the record by hand"), connector.Permanent)
		case vDelete:
			b.writes = append(b.writes, &write{g: g, change: connector.Change{Op: connector.OpDelete, ID: deleteID(t, g), Soft: t.SoftDelete,
				IfUnchangedSince: g.recordAt}})
		default:
			if g.orphan {
				b.unlink(g) // the record stays, unlinked
			}
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
		}
	}
	return nil
}

// settleDelete unlinks a contact whose record is deleted (or was gone).
func (b *batch) settleDelete(w *write, res connector.WriteResult) {
	t, r := b.t, b.r
	if res.Err != nil && !errors.Is(res.Err, connector.ErrNotFound) {
		r.failed(t, w.g, opDelete, res.Err, dispose(res.Err))
		return
	}
	b.unlink(w.g)
	if cf := w.g.afterDelete; cf != nil {
		r.commit.Conflicts = append(r.commit.Conflicts, *cf)
	}
	r.a.count(func(s *Stats) { s.Deleted++ })
	r.ack(w.g)
}

// forwardSet is the set of targets Link.Fields may hold: those flowing
// to the workspace, and the sourceUrl pseudo-field.
func forwardSet(m *mapping.Mapper) map[string]bool {
	set := map[string]bool{sourceURLKey: true}
	for _, k := range m.ForwardTargets() {
		set[k] = true
	}
	return set
}

func copyFields(f mapping.Fields) mapping.Fields {
	out := make(mapping.Fields, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}
