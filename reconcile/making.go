package reconcile

import (
	"sync"
	"time"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
)

// A pass makes a record's contact (a create, or a link to a contact found
// by externalId or match) from the record as it read it; the link records
// that copy. Under a throttled or failing API the create lands seconds
// after the read, and a row edited meanwhile holds a value the link does
// not. The observer read it, but without a link it kept no time for it,
// and the next pass read the row only after a later edit of another
// column had moved its updated_at: the row's value was weighed at that
// later time, and beat an app edit made after the row's (issue 35: the
// poll soak's last journaled loss of the hour-long run at 419f7da, an
// app edit 10 s after the row's lost to it). So while a pass makes a
// contact, the record's changed values keep their times against the copy
// being written (state.RecordEdit since the copy's UpdatedAt, which the
// link takes): held here until the contact is known, then stored with
// the link.

// makings are the records whose contact a pass is making, by externalId.
// Safe for concurrent use (the pass and the observer).
type makings struct {
	mu sync.Mutex
	m  map[string]*making
}

// making is one record whose contact is being made: the copy the pass
// read, and the edit times of the values the record changed since.
type making struct {
	fields    mapping.Fields // the copy's values
	since     time.Time      // the copy's UpdatedAt: the link's SourceUpdatedAt to come
	contactID string         // set once the link is stored
	edits     map[string]state.RecordEdit
}

// start registers a batch's items whose record has a time, as read,
// before their links are known (a linked record is never sighted: the
// observer finds its link), and returns the function that forgets them
// once the batch is done.
func (ms *makings) start(items []*item) (done func()) {
	var mine []*item
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, it := range items {
		if it.rec.UpdatedAt.IsZero() {
			continue
		}
		if ms.m == nil {
			ms.m = map[string]*making{}
		}
		ms.m[it.mapped.ExternalID] = &making{fields: it.fields, since: it.rec.UpdatedAt, edits: map[string]state.RecordEdit{}}
		mine = append(mine, it)
	}
	return func() {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		for _, it := range mine {
			delete(ms.m, it.mapped.ExternalID)
		}
	}
}

// sight keeps the times of the values of it (a later read of a record
// being made, without a link) that differ from the copy being written,
// at: each value's time as read. It returns the contact to store them
// under and those to store, once the contact is known; until then they
// are held for linked.
func (ms *makings) sight(it *item, targets []string, at func(k string) time.Time) (contactID string, es []state.RecordEdit) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	mk := ms.m[it.mapped.ExternalID]
	if mk == nil || !it.rec.UpdatedAt.After(mk.since) {
		return "", nil // not being made, or a read no newer than the copy
	}
	for _, k := range targets {
		v := it.mapped.Fields[k]
		if v == mk.fields[k] {
			continue
		}
		t := at(k)
		if e, ok := mk.edits[k]; ok && e.HeldBy(v, mk.since, t) {
			continue
		}
		e := state.RecordEdit{Target: k, Value: v, At: t, Since: mk.since}
		mk.edits[k] = e
		es = append(es, e)
	}
	if mk.contactID == "" {
		return "", nil
	}
	return mk.contactID, es
}

// linked returns the edit times held for the record of externalId ext,
// now linked to contactID under a link whose version is since, and
// stores later ones under it directly. None when the link was made from
// another copy.
func (ms *makings) linked(ext, contactID string, since time.Time) []state.RecordEdit {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	mk := ms.m[ext]
	if mk == nil || !mk.since.Equal(since) {
		return nil
	}
	mk.contactID = contactID
	es := make([]state.RecordEdit, 0, len(mk.edits))
	for _, e := range mk.edits {
		es = append(es, e)
	}
	return es
}
