package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// InboxEvent is a webhook event that the receiver acknowledged and the
// workers have not applied yet.
type InboxEvent struct {
	// Seq is the event's place in the inbox, assigned by Inbox.Enqueue.
	Seq uint64 `json:"-"`
	// ID is the webhook-id (the deduplication key).
	ID               string    `json:"id"`
	Type             string    `json:"type,omitempty"`
	ContactID        string    `json:"contactId,omitempty"`
	ContactUpdatedAt time.Time `json:"contactUpdatedAt,omitzero"`
	Body             []byte    `json:"body,omitempty"`
	ReceivedAt       time.Time `json:"receivedAt,omitzero"`
	Attempts         int       `json:"attempts,omitempty"`
	// PutOffs counts the rounds that put the event's write-back off
	// because the record changed since it was read.
	PutOffs int `json:"putOffs,omitempty"`
	// Recreate names the connector that is to create a record for the
	// contact again (its record was deleted after the contact was
	// edited, and editAfterDelete lets the edit win); "" for the
	// service's events.
	Recreate string `json:"recreate,omitempty"`
}

// appendFill is the fill of the pages of buckets whose keys are appended
// in order (bbolt splits a page at half of it by default).
const appendFill = 1.0

// seenUntil returns until when the event id is remembered; zero when it
// is not (or no longer) remembered at now.
func seenUntil(tx *bolt.Tx, id string, now time.Time) time.Time {
	raw := tx.Bucket(bucketEvents).Get([]byte(id))
	if raw == nil {
		return time.Time{}
	}
	until := fromNanos(int64(getU64(raw)))
	if !until.After(now) {
		return time.Time{}
	}
	return until
}

// markSeen remembers id until expires, replacing an older expiry.
func markSeen(tx *bolt.Tx, id string, expires time.Time) error {
	events, expiry := tx.Bucket(bucketEvents), tx.Bucket(bucketEventExpiry)
	k := []byte(id)
	if old := events.Get(k); old != nil {
		if err := expiry.Delete(append(append([]byte{}, old...), k...)); err != nil {
			return err
		}
	}
	exp := u64(uint64(nanos(expires)))
	if err := events.Put(k, exp); err != nil {
		return err
	}
	expKey := make([]byte, 0, len(exp)+len(k))
	return expiry.Put(append(append(expKey, exp...), k...), nil)
}

// Seen reports whether the webhook id was marked seen and has not
// expired.
func (s *Inbox) Seen(id string) (bool, error) {
	var seen bool
	err := s.view("read seen event "+id, func(tx *bolt.Tx) error {
		seen = !seenUntil(tx, id, s.now()).IsZero()
		return nil
	})
	return seen, err
}

// MarkSeen marks the webhook id seen until expires, atomically:
// already is true, and nothing changes, when it was seen and has not
// expired.
func (s *Inbox) MarkSeen(id string, expires time.Time) (already bool, err error) {
	if id == "" {
		return false, fmt.Errorf("mark event seen: empty id")
	}
	err = s.update("mark event seen "+id, func(tx *bolt.Tx) error {
		if !seenUntil(tx, id, s.now()).IsZero() {
			already = true
			return nil
		}
		return markSeen(tx, id, expires)
	})
	return already, err
}

// PruneSeen forgets the webhook ids that expired at or before now
// and returns how many.
func (s *Inbox) PruneSeen(now time.Time) (int, error) {
	var n int
	err := s.update("prune seen events", func(tx *bolt.Tx) error {
		events, expiry := tx.Bucket(bucketEvents), tx.Bucket(bucketEventExpiry)
		limit := nanos(now)
		c := expiry.Cursor()
		for k, _ := c.First(); len(k) >= 8 && int64(getU64(k[:8])) <= limit; k, _ = c.First() {
			id := append([]byte{}, k[8:]...) // k is invalid after the delete
			if err := c.Delete(); err != nil {
				return err
			}
			if err := events.Delete(id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// Enqueue appends e to the inbox unless its ID was already seen, in
// one transaction that also marks the ID seen for Options.EventTTL. It
// returns the event's sequence number, or duplicate true (and nothing
// appended) for an ID seen before. The receiver answers 2xx only after it
// returns without error: the event is then committed and synced. ReceivedAt
// defaults to now.
//
// Concurrent calls share one transaction and one fsync (group commit, see
// eventQueue): a call waits at most for the commit in progress and then
// its own.
func (s *Inbox) Enqueue(e InboxEvent) (seq uint64, duplicate bool, err error) {
	if e.ID == "" {
		return 0, false, fmt.Errorf("enqueue event: empty id")
	}
	req := &enqueueReq{e: e, done: make(chan bool, 1)}
	s.events.run(req, s.commitEvents)
	return req.seq, req.dup, req.err
}

// commitEvents appends a group of events in one transaction. When the
// transaction fails, every event of the group gets its error.
func (s *Inbox) commitEvents(reqs []*enqueueReq) {
	now := s.now()
	what := "enqueue event " + reqs[0].e.ID
	if len(reqs) > 1 {
		what = fmt.Sprintf("enqueue %d events", len(reqs))
	}
	err := s.update(what, func(tx *bolt.Tx) error {
		inbox := tx.Bucket(bucketInbox)
		// Both only grow at their end (keys by sequence, by expiry time):
		// full pages mean fewer pages to write at each commit.
		inbox.FillPercent = appendFill
		tx.Bucket(bucketEventExpiry).FillPercent = appendFill
		for _, r := range reqs {
			r.seq, r.dup = 0, false
			e := r.e
			if e.ReceivedAt.IsZero() {
				e.ReceivedAt = now
			}
			if !seenUntil(tx, e.ID, now).IsZero() {
				r.dup = true
				continue
			}
			if err := markSeen(tx, e.ID, now.Add(s.ttl)); err != nil {
				return err
			}
			next, err := inbox.NextSequence()
			if err != nil {
				return err
			}
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := inbox.Put(u64(next), raw); err != nil {
				return err
			}
			r.seq = next
		}
		return nil
	})
	added := map[uint64]string{}
	for _, r := range reqs {
		if err != nil {
			r.seq, r.dup, r.err = 0, false, err
		} else if r.seq != 0 {
			added[r.seq] = r.e.ContactID
		}
	}
	if len(added) > 0 {
		s.index.added(added)
	}
}

// Pending returns up to limit inbox events, oldest first (all of
// them when limit <= 0).
func (s *Inbox) Pending(limit int) ([]InboxEvent, error) {
	var out []InboxEvent
	err := s.view("read pending events", func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketInbox).Cursor()
		for k, v := c.First(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Next() {
			var e InboxEvent
			if err := unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %d: %w", getU64(k), err)
			}
			e.Seq = getU64(k)
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// Count returns the number of events in the inbox.
func (s *Inbox) Count() (int, error) {
	var n int
	err := s.view("count pending events", func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketInbox).Stats().KeyN
		return nil
	})
	return n, err
}

// Ack removes an applied event from the inbox. Acknowledging a
// missing event is not an error.
func (s *Inbox) Ack(seq uint64) error {
	err := s.update(fmt.Sprintf("ack event %d", seq), func(tx *bolt.Tx) error {
		return tx.Bucket(bucketInbox).Delete(u64(seq))
	})
	if err == nil {
		s.index.removed(seq)
	}
	return err
}

// Update rewrites an inbox event (after a failed attempt, for
// instance); ErrNotFound when it was acknowledged already.
func (s *Inbox) Update(e InboxEvent) error {
	return s.update(fmt.Sprintf("update event %d", e.Seq), func(tx *bolt.Tx) error {
		inbox := tx.Bucket(bucketInbox)
		if inbox.Get(u64(e.Seq)) == nil {
			return ErrNotFound
		}
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return inbox.Put(u64(e.Seq), raw)
	})
}
