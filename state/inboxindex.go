package state

import (
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// inboxIndex knows which inbox events concern each contact, so that the
// forward pass can ask, before it patches a contact, whether app edits of
// it wait in the inbox (Inbox.PendingOf) without reading the inbox. It
// lives in memory: built from the inbox at the first question, then kept
// by every commit that adds or removes events, after the commit (under
// its mutex, so that a build and a commit never cross).
type inboxIndex struct {
	mu        sync.Mutex
	built     bool
	byContact map[string][]uint64 // seqs, ascending
	bySeq     map[uint64]string
}

// build reads the inbox once; the caller holds mu.
func (x *inboxIndex) build(s *Inbox) error {
	if x.built {
		return nil
	}
	x.byContact, x.bySeq = map[string][]uint64{}, map[uint64]string{}
	err := s.view("index the inbox by contact", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketInbox).ForEach(func(k, v []byte) error {
			var e struct {
				ContactID string `json:"contactId"`
			}
			if err := unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", getU64(k), err)
			}
			x.addLocked(getU64(k), e.ContactID)
			return nil
		})
	})
	if err != nil {
		return err
	}
	x.built = true
	return nil
}

func (x *inboxIndex) addLocked(seq uint64, contactID string) {
	if contactID == "" {
		return
	}
	if _, ok := x.bySeq[seq]; ok {
		return
	}
	x.bySeq[seq] = contactID
	seqs := x.byContact[contactID]
	i, _ := slices.BinarySearch(seqs, seq)
	x.byContact[contactID] = slices.Insert(seqs, i, seq)
}

// added notes events committed to the inbox.
func (x *inboxIndex) added(es map[uint64]string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.built {
		return // the build reads them
	}
	for seq, c := range es {
		x.addLocked(seq, c)
	}
}

// removed notes events removed from the inbox.
func (x *inboxIndex) removed(seqs ...uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.built {
		return
	}
	for _, seq := range seqs {
		c, ok := x.bySeq[seq]
		if !ok {
			continue
		}
		delete(x.bySeq, seq)
		rest := slices.DeleteFunc(x.byContact[c], func(s uint64) bool { return s == seq })
		if len(rest) == 0 {
			delete(x.byContact, c)
		} else {
			x.byContact[c] = rest
		}
	}
}

// PendingOf returns the inbox events of a contact, oldest first:
// the workspace changes of it acknowledged to the service and not yet
// applied. A contact without such events costs no read of the file.
func (s *Inbox) PendingOf(contactID string) ([]InboxEvent, error) {
	x := &s.index
	x.mu.Lock()
	if err := x.build(s); err != nil {
		x.mu.Unlock()
		return nil, err
	}
	seqs := slices.Clone(x.byContact[contactID])
	x.mu.Unlock()
	if len(seqs) == 0 {
		return nil, nil
	}
	var out []InboxEvent
	err := s.view("read pending events of contact "+contactID, func(tx *bolt.Tx) error {
		inbox := tx.Bucket(bucketInbox)
		for _, seq := range seqs {
			v := inbox.Get(u64(seq))
			if v == nil {
				continue // applied meanwhile
			}
			var e InboxEvent
			if err := unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", seq, err)
			}
			e.Seq = seq
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
