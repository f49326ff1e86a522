package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// A forward patch of a linked contact sends the fields its record changed
// since the link. On a connector whose app edits flow back, the contact
// may have changed in the app meanwhile, its webhook event acknowledged
// and waiting in the inbox for the write-back (which waits for the batch
// in flight, see Guard): patching the same field blindly would overwrite
// the app's edit, and the write-back would then drop that event as older
// than syncd's own write. So before each patch (each attempt: an event may
// come while a patch is retried) the pass weighs the contact's pending
// events (state's index by contact: no read when there are none, no call
// ever): a field both sides changed to different values is a conflict,
// settled by the connector's policy with each edit's own time (the
// record's UpdatedAt, the updatedAt of the first pending version that
// holds the app's value).
//
//   - The record wins: the field is patched, the conflict journaled; the
//     link's ContactUpdatedAt (the patch's answer) makes the older events
//     stale for the write-back.
//   - The app wins: the field is left out of the patch and the link keeps
//     its last agreed value, so that the write-back applies the app's
//     edit to the record (and journals it). When something else is
//     patched, the link's ContactUpdatedAt is set just before the
//     patch's answer: the older events, which may hold app values that
//     lost, are stale, and the patch's echo (or catch-up), which holds the
//     app's winning value, is applied.

// appEdits is the outcome of weighing a contact's pending events.
type appEdits struct {
	// want is what to patch the contact to: the record's values, but for
	// the fields whose app edit won, which keep the app's value (put back
	// when a version of syncd's own overwrote it).
	want mapping.Fields
	// agreed is what the link is to record: want, but the link's own
	// value for the fields whose app edit won, so that the write-back
	// brings the app's edit to the record.
	agreed mapping.Fields
	// kept are the fields whose app edit won, with the app's values.
	kept map[string]string
	// lost is the conflict the record won, to journal once patched.
	lost *state.Conflict
	// wait is a target whose conflict is left to a later version of the
	// record (unsettled): nothing is patched now.
	wait string
	// times are the record's own edit times of the fields whose app edit
	// won by them, older than the record's UpdatedAt (a change stream's
	// FieldsAt): the write-back, which reads the record whole, weighs the
	// app's edits with them (state.Reverse.RecordEdits).
	times []state.RecordEdit
}

// recordEditAt is when the record's value v of target k was edited: the
// time the stream says the record came to hold it (FieldsAt), or an
// earlier one either direction learnt before (state.RecordEdit: a read
// of the record made before a later edit of another column), else the
// record's UpdatedAt. A later edit of another column moves a row's
// updated_at past an app edit made after the column's own edit.
func (r *Reconciler) recordEditAt(it *item, k, v string) (time.Time, error) {
	at := r.fieldAt(it, k)
	st := r.opts.Store.RecordEdits
	if st == nil {
		return at, nil
	}
	es, err := st.RecordEdits(r.opts.Connector, it.link.ContactID)
	if err != nil {
		return at, err
	}
	if e, ok := es[k]; ok && e.Holds(v, it.link.SourceUpdatedAt) && e.At.Before(at) {
		at = e.At
	} else if ok {
		r.log.WithFields(map[string]any{logfield.Contact: it.link.ContactID, logfield.RecordEdits: e.String(),
			logfield.RecordEditAt: at, logfield.LinkSince: it.link.SourceUpdatedAt}).Debug("record edit time known but not weighed")
	}
	return at, nil
}

// fieldAt is when the record, as read, came to hold its value of target
// k: the stream's FieldsAt of its column, else the record's UpdatedAt.
func (r *Reconciler) fieldAt(it *item, k string) time.Time {
	at := it.rec.UpdatedAt
	if col := r.opts.Mapper.SourceOf(k); col != "" {
		if t, ok := it.rec.FieldsAt[col]; ok && t.Before(at) {
			at = t
		}
	}
	return at
}

// version is one version of a contact an inbox event carries: its
// updatedAt and its canonical values.
type version struct {
	at     time.Time
	fields mapping.Fields
}

// pendingVersions returns the versions of a linked item's contact that
// wait in the inbox, received after the event afterSeq and not older
// than the link, in updatedAt order, and the last event's seq; with
// current, the contact as peekContacts read it too, when it is newer
// than the version the link records (that one was weighed already: by
// the write-back, which may have left the record's newer value for this
// pass to patch, or it is syncd's own write).
func (w *writer) pendingVersions(it *item, afterSeq uint64, current bool) ([]version, uint64, error) {
	r := w.r
	evs, err := w.inbox.PendingOf(it.link.ContactID)
	if err != nil {
		return nil, afterSeq, fmt.Errorf("weigh app edits of contact %s: %w", it.link.ContactID, err)
	}
	last := afterSeq
	var vs []version
	for _, e := range evs {
		last = max(last, e.Seq)
		if e.Seq <= afterSeq || e.Type != workspace.EventContactUpdated || e.ContactUpdatedAt.Before(it.link.ContactUpdatedAt) {
			continue
		}
		c, err := eventContact(e)
		if err != nil {
			continue // the write-back sets it aside
		}
		v := version{at: c.UpdatedAt, fields: r.opts.Mapper.FromContact(c)}
		i := len(vs)
		for i > 0 && vs[i-1].at.After(v.at) {
			i--
		}
		vs = slices.Insert(vs, i, v)
	}
	if c := it.current; current && c != nil && c.UpdatedAt.After(it.link.ContactUpdatedAt) {
		i := len(vs)
		for i > 0 && vs[i-1].at.After(c.UpdatedAt) {
			i--
		}
		vs = slices.Insert(vs, i, version{at: c.UpdatedAt, fields: r.opts.Mapper.FromContact(*c)})
	}
	return vs, last, nil
}

// peekContacts reads the linked contacts the batch is about to patch, as
// the workspace holds them now (see above), in one list call per 50. A
// contact the list does not return (its externalId changed in the app)
// is weighed on its pending events alone.
func (w *writer) peekContacts(ctx context.Context, items []*item) error {
	r := w.r
	if !r.opts.WeighAppEdits {
		return nil
	}
	ru := w.rulesOf()
	byExt := map[string]*item{}
	var ids []string
	for _, it := range items {
		if it.link == nil || decide(it, ru) != actPatch {
			continue
		}
		byExt[it.mapped.ExternalID] = it
		ids = append(ids, it.mapped.ExternalID)
	}
	if len(ids) == 0 {
		return nil
	}
	cs, err := r.opts.Workspace.ContactsByExternalIDs(ctx, r.opts.Source, ids)
	if err != nil {
		return fmt.Errorf("read %d contacts before patching them: %w", len(ids), err)
	}
	for i := range cs {
		c := cs[i]
		if c.ExternalID == nil {
			continue
		}
		if it := byExt[*c.ExternalID]; it != nil && c.ID == it.link.ContactID {
			it.current = &c
		}
	}
	return nil
}

// appEditOf returns the app's value of target k in the versions vs
// (oldest first) and when the app made it, unless the app did not change
// it from base or changed it to the record's value rec. The app's value
// is that of the newest version not holding the record's (a version
// holding it may be the echo of an earlier attempt of this very patch,
// whose answer was lost); its edit is as old as the first version
// holding it.
func appEditOf(vs []version, k, rec, base string) (app string, at time.Time, ok bool) {
	j := len(vs) - 1
	for j >= 0 && vs[j].fields[k] == rec {
		j--
	}
	if j < 0 || vs[j].fields[k] == base {
		return "", time.Time{}, false
	}
	app, at = vs[j].fields[k], vs[j].at
	for i := j - 1; i >= 0 && vs[i].fields[k] == app; i-- {
		at = vs[i].at
	}
	return app, at, true
}

// unsettled returns a target of a record read again in place of a
// stream's copy whose value came after that copy (connector.Record's
// Unsettled) and that the app changed too: the conflict is left to the
// stream's version that made the record's value, which tells its time.
// Weighed at the row's updated_at, which a later edit of another column
// may have moved past the app's edit, the row's older value won on both
// sides (issue 35: the binlog soak). "" when there is none.
func (r *Reconciler) unsettled(it *item, vs []version, want mapping.Fields) string {
	if len(it.rec.Unsettled) == 0 {
		return ""
	}
	base := mapping.Fields(it.link.Fields)
	for _, k := range r.opts.Mapper.ReverseTargets() {
		rec := want[k]
		if col := r.opts.Mapper.SourceOf(k); col == "" || !it.rec.Unsettled[col] || !r.forwardTarget(k) || rec == base[k] {
			continue
		}
		if _, _, ok := appEditOf(vs, k, rec, base[k]); ok {
			return k
		}
	}
	return ""
}

// weighAppEdits weighs the pending app edits of a linked item's contact
// (see above) against want, what the pass would patch it to; nil when
// there is nothing to weigh. seq is the last event weighed.
func (w *writer) weighAppEdits(it *item, want mapping.Fields) (_ *appEdits, seq uint64, newest mapping.Fields, err error) {
	vs, seq, err := w.pendingVersions(it, 0, true)
	if err != nil {
		return nil, seq, nil, err
	}
	newest = mapping.Fields(it.link.Fields)
	if len(vs) > 0 {
		newest = vs[len(vs)-1].fields
	}
	if k := w.r.unsettled(it, vs, want); k != "" {
		return &appEdits{wait: k}, seq, newest, nil
	}
	return w.settle(it, vs, want), seq, newest, nil
}

// settle settles the fields want changes from the link against the app's
// value in the newest of vs, each edit at its own time: the record's
// UpdatedAt, the updatedAt of the first version holding the app's value.
func (w *writer) settle(it *item, vs []version, want mapping.Fields) *appEdits {
	r := w.r
	if len(vs) == 0 {
		return nil
	}
	newest := vs[len(vs)-1].fields
	base := mapping.Fields(it.link.Fields)
	conflict := r.conflictPolicy()
	var out *appEdits
	var appAt, recAtLogged time.Time
	for _, k := range r.opts.Mapper.ReverseTargets() {
		rec := want[k]
		if !r.forwardTarget(k) || rec == base[k] {
			continue // never patched, or not changed by the record
		}
		app, at, ok := appEditOf(vs, k, rec, base[k])
		if !ok {
			continue // the app did not change it, or to the record's value
		}
		if out == nil {
			out = &appEdits{want: copyFields(want), agreed: copyFields(want), kept: map[string]string{}}
		}
		appAt = at
		recAt, err := r.recordEditAt(it, k, rec)
		if err != nil {
			r.log.WithError(err).Warn("record edit times could not be read; the record's updated_at is weighed")
		}
		recAtLogged = recAt
		if conflict.WorkspaceWins(at, recAt) {
			// The write-back weighs the app's edit again, reading the
			// record whole: it weighs it at the same time.
			out.times = append(out.times, state.RecordEdit{Target: k, Value: rec, At: recAt})
			out.kept[k] = app
			setOrDelete(out.agreed, k, base)
			if newest[k] == app {
				setOrDelete(out.want, k, base) // the contact holds it: not patched
			} else {
				out.want[k] = app // put back over syncd's own version
			}
			continue
		}
		if out.lost == nil {
			out.lost = &state.Conflict{Connector: r.opts.Connector, ExternalID: it.mapped.ExternalID, ContactID: it.link.ContactID,
				Policy: conflict.String(), Winner: r.opts.Connector, Workspace: map[string]string{}, Source: map[string]string{}}
		}
		out.lost.Workspace[k], out.lost.Source[k] = app, rec
	}
	if out != nil {
		winner := r.opts.Connector
		if len(out.kept) > 0 {
			winner = "workspace"
		}
		r.log.WithFields(map[string]any{logfield.ExternalID: it.mapped.ExternalID, logfield.Contact: it.link.ContactID,
			logfield.Policy: conflict, logfield.Winner: winner, logfield.AppEditAt: appAt, logfield.RecordEditAt: recAtLogged,
			logfield.RecordUpdatedAt: it.rec.UpdatedAt}).
			Info("record and contact both changed since the last sync; conflict settled by policy")
	}
	return out
}

// overwritten weighs the app edits of the contact that reached the inbox
// while its patch was in flight (after the event seq) and that the patch,
// answered at patchedAt, may have overwritten: the versions older than
// the patch. wrote is what the patch wrote.
func (w *writer) overwritten(it *item, seq uint64, wrote mapping.Fields, patchedAt time.Time) (_ *appEdits, last uint64, err error) {
	vs, last, err := w.pendingVersions(it, seq, false)
	if err != nil {
		return nil, seq, err
	}
	i := len(vs)
	for i > 0 && !vs[i-1].at.Before(patchedAt) {
		i--
	}
	return w.settle(it, vs[:i], wrote), last, nil
}

// forwardTarget reports whether target flows to the workspace.
func (r *Reconciler) forwardTarget(target string) bool {
	for _, k := range r.opts.Mapper.ForwardTargets() {
		if k == target {
			return true
		}
	}
	return false
}

// eventContact decodes the contact an inbox event carries (data.object,
// or data.resource in older entries).
func eventContact(e state.InboxEvent) (workspace.Contact, error) {
	var env struct{ Data workspace.EventData }
	var c workspace.Contact
	if err := json.Unmarshal(e.Body, &env); err != nil {
		return c, fmt.Errorf("decode event %s: %w", e.ID, err)
	}
	raw, where := env.Data.Payload()
	if where == "" {
		return c, fmt.Errorf("event %s carries no contact", e.ID)
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("decode contact of event %s: %w", e.ID, err)
	}
	return c, nil
}

// setOrDelete sets f[k] to from's value of k, or deletes it when from
// has none.
func setOrDelete(f mapping.Fields, k string, from mapping.Fields) {
	if v, ok := from[k]; ok {
		f[k] = v
	} else {
		delete(f, k)
	}
}

func copyFields(f mapping.Fields) mapping.Fields {
	out := make(mapping.Fields, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}
