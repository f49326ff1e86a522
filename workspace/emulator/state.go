package emulator

import (
	"encoding/hex"
	"math/rand"
	"sort"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// state is everything the emulator stores; Emulator.mu guards it.
type state struct {
	ids *rand.Rand // ids and secrets, seeded

	// Contacts, indexed by id and by externalId, and kept in creation
	// order (seq ascending) for listing; deleted records stay in order
	// until compacted.
	contacts   map[string]*contactRec
	order      []*contactRec
	byExternal map[string][]*contactRec
	bySource   map[string]int // live contacts per source ("" for null)
	seq        uint64
	live       int
	dead       int // deleted records still in order
	scanned    int // records examined by list calls (tests check paging cost)

	webhooks      map[string]*webhookRec
	webhookOrder  []string
	nextWebhookID int

	act *activityState // calls and texts (activity.go), made on first use
}

func newState(seed int64) *state {
	return &state{
		ids:           rand.New(rand.NewSource(seed)),
		contacts:      map[string]*contactRec{},
		byExternal:    map[string][]*contactRec{},
		bySource:      map[string]int{},
		webhooks:      map[string]*webhookRec{},
		nextWebhookID: 1 + int(uint64(seed)%9000)*1000,
	}
}

// hexID returns prefix followed by n random bytes in hex.
func (s *state) hexID(prefix string, n int) string {
	b := make([]byte, n)
	s.ids.Read(b)
	return prefix + hex.EncodeToString(b)
}

// contactRec is a stored contact.
type contactRec struct {
	seq     uint64
	c       workspace.Contact
	deleted bool
}

func sourceKey(s *string) string {
	if s == nil {
		return ""
	}
	return "=" + *s
}

// addContact stores c as a new contact.
func (s *state) addContact(c workspace.Contact) *contactRec {
	s.seq++
	r := &contactRec{seq: s.seq, c: c}
	s.contacts[c.ID] = r
	s.order = append(s.order, r)
	s.index(r)
	s.live++
	return r
}

func (s *state) index(r *contactRec) {
	if r.c.ExternalID != nil {
		s.byExternal[*r.c.ExternalID] = append(s.byExternal[*r.c.ExternalID], r)
	}
	s.bySource[sourceKey(r.c.Source)]++
}

func (s *state) unindex(r *contactRec) {
	if r.c.ExternalID != nil {
		k := *r.c.ExternalID
		list := s.byExternal[k]
		for i, x := range list {
			if x == r {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.byExternal, k)
		} else {
			s.byExternal[k] = list
		}
	}
	if k := sourceKey(r.c.Source); s.bySource[k] <= 1 {
		delete(s.bySource, k)
	} else {
		s.bySource[k]--
	}
}

// replaceContact stores the changed contact c of record r, keeping the
// indexes right.
func (s *state) replaceContact(r *contactRec, c workspace.Contact) {
	s.unindex(r)
	r.c = c
	s.index(r)
}

// deleteContact removes r.
func (s *state) deleteContact(r *contactRec) {
	s.unindex(r)
	r.deleted = true
	delete(s.contacts, r.c.ID)
	s.live--
	s.dead++
	if s.dead > 1024 && s.dead > len(s.order)/2 {
		s.compact()
	}
}

// compact drops deleted records from order.
func (s *state) compact() {
	kept := s.order[:0]
	for _, r := range s.order {
		if !r.deleted {
			kept = append(kept, r)
		}
	}
	clear(s.order[len(kept):])
	s.order = kept
	s.dead = 0
}

// after returns the index in order of the first record with seq > seq.
func (s *state) after(seq uint64) int {
	return sort.Search(len(s.order), func(i int) bool { return s.order[i].seq > seq })
}

// cloneContact deep-copies c, so that an answer never shares slices with
// the store.
func cloneContact(c workspace.Contact) workspace.Contact {
	c.ExternalID = cloneStr(c.ExternalID)
	c.Source = cloneStr(c.Source)
	c.SourceURL = cloneStr(c.SourceURL)
	d := &c.DefaultFields
	d.Company, d.FirstName, d.LastName, d.Role = cloneStr(d.Company), cloneStr(d.FirstName), cloneStr(d.LastName), cloneStr(d.Role)
	d.Emails = append([]workspace.Item{}, d.Emails...)
	d.PhoneNumbers = append([]workspace.Item{}, d.PhoneNumbers...)
	cfs := make([]workspace.CustomField, len(c.CustomFields))
	for i, cf := range c.CustomFields {
		cf.Value = cf.Value.Clone()
		cfs[i] = cf
	}
	c.CustomFields = cfs
	return c
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// bumpUpdatedAt returns the updatedAt of a change at now: strictly after
// the previous one, so that every change is visible in updatedAt even
// within one millisecond.
func bumpUpdatedAt(prev, now time.Time) time.Time {
	if !now.After(prev) {
		return prev.Add(time.Millisecond)
	}
	return now
}
