package reconcile

import (
	"time"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// putFlight records the flight of a patch of a linked contact, for the
// write-back (state.Flight): seq is the last inbox event the pass
// weighed, c the patch's answer (saved with ContactUpdatedAt just before
// it when kept), have the link's values before the patch, before the
// contact's as the pass knew them, wrote the values patched and agreed
// those the link now holds.
func (w *writer) putFlight(it *item, seq uint64, c workspace.Contact, kept bool, have, before, wrote, agreed mapping.Fields) {
	st := w.r.opts.Store.Flights
	if st == nil {
		return
	}
	f := state.Flight{Seq: seq, Answer: c.UpdatedAt, LinkAt: c.UpdatedAt,
		Before: map[string]string{}, Wrote: map[string]string{}, Record: map[string]string{}, Linked: map[string]string{},
		RecordAt: map[string]time.Time{}}
	if kept {
		f.LinkAt = c.UpdatedAt.Add(-time.Nanosecond) // saveKept
	}
	for _, k := range twoWayTargets(w.r) {
		if wrote[k] == have[k] {
			continue // not patched
		}
		f.Before[k], f.Wrote[k], f.Record[k], f.Linked[k] = before[k], wrote[k], it.fields[k], agreed[k]
		at, err := w.r.recordEditAt(it, k, it.fields[k])
		if err != nil {
			at = w.r.fieldAt(it, k)
		}
		f.RecordAt[k] = at
	}
	if len(f.Wrote) > 0 {
		st.PutFlight(w.r.opts.Connector, it.link.ContactID, f)
	}
}
