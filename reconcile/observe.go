package reconcile

import (
	"fmt"

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

// observeRecords keeps the edit times of the changed values of the
// batch's linked records (see above).
func (p *pass) observeRecords(items []*item) error {
	r := p.r
	st := r.opts.Store.RecordEdits
	if st == nil || !r.opts.WeighAppEdits {
		return nil
	}
	twoWay := twoWayTargets(r)
	byContact := map[string][]state.RecordEdit{}
	for _, it := range items {
		if it.link == nil || it.rec.UpdatedAt.IsZero() {
			continue
		}
		var known map[string]state.RecordEdit
		read := false
		var es []state.RecordEdit
		for _, k := range twoWay {
			v := it.mapped.Fields[k]
			if v == it.link.Fields[k] {
				continue
			}
			if !read {
				var err error
				if known, err = st.RecordEdits(r.opts.Connector, it.link.ContactID); err != nil {
					return fmt.Errorf("read record edit times of %s: %w", it.mapped.ExternalID, err)
				}
				read = true
			}
			at := r.fieldAt(it, k)
			if e, ok := known[k]; ok && e.Holds(v, it.link.SourceUpdatedAt) && !e.At.After(at) {
				continue // known from an earlier read
			}
			es = append(es, state.RecordEdit{Target: k, Value: v, At: at, Since: it.link.SourceUpdatedAt})
		}
		if len(es) > 0 {
			byContact[it.link.ContactID] = es
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

// twoWayTargets are the targets flowing both ways.
func twoWayTargets(r *Reconciler) []string {
	rev := r.opts.Mapper.ReverseTargets()
	var out []string
	for _, k := range r.opts.Mapper.ForwardTargets() {
		for _, x := range rev {
			if x == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
