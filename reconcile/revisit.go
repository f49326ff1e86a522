package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// revisit runs through the pass the records the write-back asked it to
// read again (state.Revisit): the write-back let a record's value win a
// conflict, a value only the pass brings to the contact, and the pass
// may have read that version of the record already, before the app's
// edit reached the write-back, leaving the app's value for the
// write-back to weigh. The changes feed shows a record once per change:
// without this, each side would keep its own value. One Get call per
// pass, only when asked; a record gone is forgotten (its deletion is
// the feed's to carry).
func (p *pass) revisit(ctx context.Context) error {
	r := p.r
	getter, ok := r.opts.Reader.(connector.Getter)
	if r.opts.Store.Revisits == nil || !ok || !r.opts.Type.Incremental {
		return nil
	}
	rs, err := r.opts.Store.Revisits.Revisits(r.opts.Connector)
	if err != nil || len(rs) == 0 {
		return err
	}
	ids := make([]string, len(rs))
	for i, rv := range rs {
		ids[i] = rv.RecordID
	}
	recs, err := getter.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read %d records to revisit: %w", len(ids), err)
	}
	r.log.WithField(logfield.Records, len(recs)).Debug("reading again the records whose value won a conflict in the write-back")
	if streamReader(r.opts.Reader) {
		for i := range recs {
			if err := r.unsettleRevisited(&recs[i]); err != nil {
				return err
			}
		}
	}
	if len(recs) > 0 {
		if err := p.batch(ctx, recs); err != nil {
			return fmt.Errorf("revisit records: %w", err)
		}
	}
	return r.opts.Store.Revisits.DoneRevisits(rs)
}

// A record read for a revisit is the row as it is now, with no stream's
// times: on a streamed table its updated_at may be a later edit of
// another column, made after the version the write-back asked about,
// and the pass is then behind it in the stream (a minute at 12 edits/s
// against the workspace's 10 requests/s). Weighed at that updated_at, a
// row's value older than an app edit beat it on both sides (issue 35:
// the logical hour-long soak at 468a4df, a last name 6.3 s older than
// the app's, weighed at a first-name edit 1.7 s after the app's). So a
// changed value whose own time no stream read told yet is unsettled, as
// in a copy read again (readAgain): a conflict on it is left to the
// stream's version that made it.

// unsettleRevisited marks rec's changed values whose own time is not
// known (unsettledSince).
func (r *Reconciler) unsettleRevisited(rec *connector.Record) error {
	if rec.Deleted || r.opts.Store.RecordEdits == nil {
		return nil
	}
	m, err := r.opts.Mapper.ToContact(*rec)
	if err != nil {
		return nil // the pass sets it aside
	}
	l, ok, err := r.opts.Store.Links.Get(r.opts.Connector, m.ExternalID)
	if err != nil || !ok {
		return err
	}
	known, err := r.opts.Store.RecordEdits.RecordEdits(r.opts.Connector, l.ContactID)
	if err != nil {
		return fmt.Errorf("read record edit times of %s: %w", m.ExternalID, err)
	}
	for _, k := range unsettledSince(twoWayTargets(r), m.Fields, l, known) {
		if col := r.opts.Mapper.SourceOf(k); col != "" {
			if rec.Unsettled == nil {
				rec.Unsettled = map[string]bool{}
			}
			rec.Unsettled[col] = true
		}
	}
	return nil
}

// unsettledSince returns the targets among ks whose value in fields
// differs from what link l agrees on and whose own time is not known:
// no stream read kept one (state.RecordEdit not Bound) for this value
// since the link's version. A Bound (a whole-row read's updated_at) is
// not the value's own time.
func unsettledSince(ks []string, fields map[string]string, l state.Link, known map[string]state.RecordEdit) []string {
	var out []string
	for _, k := range ks {
		v := fields[k]
		if v == l.Fields[k] {
			continue
		}
		if e, ok := known[k]; ok && !e.Bound && e.Holds(v, l.SourceUpdatedAt) {
			continue
		}
		out = append(out, k)
	}
	return out
}
