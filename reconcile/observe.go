package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// A pass reads a linked record's new value of a target flowing both ways
// some time before its patch reaches the contact: seconds when the
// workspace's API is slow or failing, longer across a restart. An app
// edit of the same field made meanwhile is weighed by the write-back,
// which reads the record whole: a later edit of another column has moved
// its UpdatedAt past the app's edit by then, and weighed at that time the
// row's older value beat the app's newer one on both sides (issue 35: the
// poll soak, seed 3, an app edit 7 s after the table's edit lost to it).
// So before a batch's writes the pass keeps, for each changed value, when
// the record held it as read (state.RecordEdit, valid while the link's
// SourceUpdatedAt stands): whichever direction weighs the conflict, the
// value's time is at most that. One state write per batch holding such
// records, none otherwise.

// observe keeps the edit times of the changed values of items' linked
// records.
func (r *Reconciler) observe(items []*item) error {
	st := r.opts.Store.RecordEdits
	if st == nil || !r.opts.WeighAppEdits {
		return nil
	}
	twoWay := twoWayTargets(r)
	byContact := map[string][]state.RecordEdit{}
	for _, it := range items {
		l := it.link
		if l == nil {
			l = it.creating // its link to come (creating.go)
		}
		if l == nil && !it.rec.UpdatedAt.IsZero() {
			// Perhaps its contact being made by the pass (making.go).
			id, es := r.makings.sight(it, twoWay, func(k string) time.Time { return r.fieldAt(it, k) })
			if len(es) > 0 {
				byContact[id] = es
			}
			continue
		}
		if l == nil || it.rec.UpdatedAt.IsZero() {
			continue
		}
		var known map[string]state.RecordEdit
		read := false
		var es []state.RecordEdit
		for _, k := range twoWay {
			v := it.mapped.Fields[k]
			if v == l.Fields[k] || it.rec.Unsettled[r.opts.Mapper.SourceOf(k)] {
				continue // unchanged, or its time still to come (readAgain)
			}
			if !read {
				var err error
				if known, err = st.RecordEdits(r.opts.Connector, l.ContactID); err != nil {
					return fmt.Errorf("read record edit times of %s: %w", it.mapped.ExternalID, err)
				}
				read = true
			}
			at := r.fieldAt(it, k)
			if e, ok := known[k]; ok && e.HeldBy(v, l.SourceUpdatedAt, at) && !(e.Bound && e.At.Equal(at)) {
				continue // known from an earlier read (a whole-row read's bound at this very time is kept as the value's own: unsettleRevisited)
			}
			es = append(es, state.RecordEdit{Target: k, Value: v, At: at, Since: l.SourceUpdatedAt})
		}
		if len(es) > 0 {
			byContact[l.ContactID] = es
			r.log.WithFields(map[string]any{logfield.Contact: l.ContactID, logfield.RecordEdits: fmt.Sprint(es)}).Debug("record edit times kept")
		}
	}
	if len(byContact) == 0 {
		return nil
	}
	if err := st.PutRecordEditsOf(r.opts.Connector, byContact); err != nil {
		return fmt.Errorf("save record edit times of %d records: %w", len(byContact), err)
	}
	return nil
}

// A pass busy with its patches (a large backlog after a restart, a
// workspace API slowed by faults) reads nothing new for seconds: a row's
// value read only after a later edit of another column moved its
// updated_at is weighed at that time. On a polled table, whose reads are
// cheap, an Observer reads the changes on each tick of the schedule
// whatever the pass is doing, and keeps their values' times the same
// way (observe): no write but that state, no workspace call.

// Observer reads a connector's changes between its passes (see above).
// Its methods are not safe for concurrent use.
type Observer struct {
	r      *Reconciler
	cursor string
	read   bool // cursor was read from the pass's checkpoint
}

// NewObserver returns an observer of r's source, from the pass's
// checkpoint on.
func (r *Reconciler) NewObserver() *Observer { return &Observer{r: r} }

// Observe reads the records changed since the last call (the first: since
// the pass's checkpoint) and keeps their changed values' times. A source
// that is not incremental, or a connector whose edits do not flow back,
// is not read.
func (o *Observer) Observe(ctx context.Context) error {
	r := o.r
	if r.opts.Store.RecordEdits == nil || !r.opts.WeighAppEdits || !r.opts.Type.Incremental {
		return nil
	}
	if !o.read {
		cp, err := r.opts.Store.Checkpoints.Get(r.opts.Connector, "")
		if err != nil {
			return fmt.Errorf("read checkpoint: %w", err)
		}
		o.cursor, o.read = cp, true
	}
	return r.opts.Reader.Changes(ctx, o.cursor, func(ctx context.Context, b connector.Batch) error {
		items := make([]*item, 0, len(b.Records))
		for _, rec := range b.Records {
			if rec.Deleted || rec.Invalid != nil {
				continue
			}
			m, err := r.opts.Mapper.ToContact(rec)
			if err != nil {
				continue // the pass sets it aside
			}
			l, ok, err := r.opts.Store.Links.Get(r.opts.Connector, m.ExternalID)
			if err != nil {
				return fmt.Errorf("read link %s: %w", m.ExternalID, err)
			}
			it := &item{rec: rec, mapped: m}
			if ok {
				it.link = &l
				keepUnread(r.opts.Mapper, it)
			}
			items = append(items, it)
		}
		if err := r.markCreating(items); err != nil {
			return err
		}
		if err := r.observe(items); err != nil {
			return err
		}
		if b.Checkpoint != "" {
			o.cursor = b.Checkpoint
		}
		return nil
	})
}
