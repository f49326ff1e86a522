package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The activity domain (issue 33): the queue of acknowledged call and
// message events, what syncd knows of each call and text, which activity
// it wrote for each on each connector's record, per-connector counts and
// the catch-up position. Its buckets are made on first use, like the
// field warnings: files of every schema version read them as empty.
var (
	bucketActivityQueue    = []byte("activityQueue")    // seq(8) -> ActivityEvent JSON
	bucketActivityItems    = []byte("activityItems")    // item key -> opaque (package activity's merged call or text)
	bucketActivityWritten  = []byte("activityWritten")  // connector\0key -> WrittenActivity JSON
	bucketActivityCounts   = []byte("activityCounts")   // connector -> ActivityCounts JSON
	bucketActivityPosition = []byte("activityPosition") // name -> position (opaque)
)

// Activities is the activity domain of the state (Store.Activities): it
// shares the file, and the seen webhook ids with the inbox.
type Activities struct {
	*file
	// ttl is how long Enqueue remembers a webhook id (the inbox's).
	ttl time.Duration
}

// ActivityEvent is a call or message event the receiver acknowledged (or
// catch-up found) and the activity direction has not handled yet.
type ActivityEvent struct {
	// Seq is the event's place in the queue, assigned by Enqueue.
	Seq uint64 `json:"-"`
	// ID is the webhook-id, or a catch-up id ("catchup:..."): the
	// deduplication key.
	ID   string `json:"id"`
	Type string `json:"type"`
	// Body is the delivery's body (it may hold a text or a transcript:
	// never logged).
	Body       []byte    `json:"body"`
	ReceivedAt time.Time `json:"receivedAt,omitzero"`
	Attempts   int       `json:"attempts,omitempty"`
}

// WrittenActivity is what syncd wrote for one activity key on one
// connector: the intent comes first (Intent true, no ActivityID), then
// the activity's id and the hash of the value written.
type WrittenActivity struct {
	Intent     bool      `json:"intent,omitempty"`
	ActivityID string    `json:"activityId,omitempty"`
	Hash       string    `json:"hash,omitempty"`
	RecordID   string    `json:"recordId,omitempty"`
	WrittenAt  time.Time `json:"writtenAt,omitzero"`
}

// ActivityCounts are a connector's activity figures since the state file
// was made.
type ActivityCounts struct {
	// Logged counts activities logged (each key's first write, or the
	// one found after a crash); Updated, later writes of them.
	Logged  int64 `json:"logged"`
	Updated int64 `json:"updated"`
	// Skipped counts calls and texts with a number no link knows.
	Skipped int64 `json:"skipped"`
	// Failed counts activities the system refused (dead letters).
	Failed int64 `json:"failed"`
}

// Enqueue appends e unless its ID was seen before (the seen ids of
// contact events, with their TTL), in one synced transaction: the
// receiver answers 2xx only after it returns without error.
func (a *Activities) Enqueue(e ActivityEvent) (seq uint64, duplicate bool, err error) {
	if e.ID == "" {
		return 0, false, fmt.Errorf("enqueue activity event: empty id")
	}
	s := a
	err = s.update("enqueue activity event "+e.ID, func(tx *bolt.Tx) error {
		now := s.now()
		if !seenUntil(tx, e.ID, now).IsZero() {
			duplicate = true
			return nil
		}
		if err := markSeen(tx, e.ID, now.Add(s.ttl)); err != nil {
			return err
		}
		q, err := tx.CreateBucketIfNotExists(bucketActivityQueue)
		if err != nil {
			return err
		}
		q.FillPercent = appendFill
		if e.ReceivedAt.IsZero() {
			e.ReceivedAt = now
		}
		if seq, err = q.NextSequence(); err != nil {
			return err
		}
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return q.Put(u64(seq), raw)
	})
	return seq, duplicate, err
}

// Pending returns up to limit queued events, oldest first (all when
// limit <= 0).
func (a *Activities) Pending(limit int) ([]ActivityEvent, error) {
	var out []ActivityEvent
	err := a.view("read activity events", func(tx *bolt.Tx) error {
		q := tx.Bucket(bucketActivityQueue)
		if q == nil {
			return nil
		}
		c := q.Cursor()
		for k, v := c.First(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Next() {
			var e ActivityEvent
			if err := unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode activity event %d: %w", getU64(k), err)
			}
			e.Seq = getU64(k)
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// CountPending returns the number of queued events.
func (a *Activities) CountPending() (int, error) {
	n := 0
	err := a.view("count activity events", func(tx *bolt.Tx) error {
		if q := tx.Bucket(bucketActivityQueue); q != nil {
			n = q.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// Ack removes the event seq from the queue (done, or set aside).
func (a *Activities) Ack(seq uint64) error {
	return a.update(fmt.Sprintf("ack activity event %d", seq), func(tx *bolt.Tx) error {
		if q := tx.Bucket(bucketActivityQueue); q != nil {
			return q.Delete(u64(seq))
		}
		return nil
	})
}

// Attempted counts a failed attempt at the event seq and returns the
// attempts so far (0 when the event is gone).
func (a *Activities) Attempted(seq uint64) (int, error) {
	n := 0
	err := a.update(fmt.Sprintf("count attempt of activity event %d", seq), func(tx *bolt.Tx) error {
		q := tx.Bucket(bucketActivityQueue)
		if q == nil {
			return nil
		}
		raw := q.Get(u64(seq))
		if raw == nil {
			return nil
		}
		var e ActivityEvent
		if err := unmarshal(raw, &e); err != nil {
			return err
		}
		e.Attempts++
		n = e.Attempts
		out, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return q.Put(u64(seq), out)
	})
	return n, err
}

// Item returns the stored item of key (opaque to state); ok false when
// there is none.
func (a *Activities) Item(key string) (raw []byte, ok bool, err error) {
	err = a.view("read activity item "+key, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketActivityItems); b != nil {
			switch v := b.Get([]byte(key)); {
			case len(v) > 0 && v[0] == '{': // written before items carried their time
				raw, ok = append([]byte(nil), v...), true
			case len(v) >= 8:
				raw, ok = append([]byte(nil), v[8:]...), true
			}
		}
		return nil
	})
	return raw, ok, err
}

// bucketActivityItemTimes indexes the items by when they were last put:
// time(8)+key -> nil, so that PruneItems reads only what it removes.
var bucketActivityItemTimes = []byte("activityItemTimes")

// PutItem stores the item of key, and when it was put.
func (a *Activities) PutItem(key string, raw []byte) error {
	return a.update("put activity item "+key, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketActivityItems)
		if err != nil {
			return err
		}
		times, err := tx.CreateBucketIfNotExists(bucketActivityItemTimes)
		if err != nil {
			return err
		}
		k := []byte(key)
		now := u64(uint64(nanos(a.now())))
		if old := b.Get(k); len(old) >= 8 {
			// The item's previous time entry, kept in front of its value.
			if err := times.Delete(append(append([]byte{}, old[:8]...), k...)); err != nil {
				return err
			}
		}
		if err := times.Put(append(append([]byte{}, now...), k...), nil); err != nil {
			return err
		}
		return b.Put(k, append(append([]byte{}, now...), raw...))
	})
}

// PruneItems forgets the items last put before before (their calls'
// and texts' values, a text's body and a transcript among them) and
// returns how many; what was written for them stays.
func (a *Activities) PruneItems(before time.Time) (int, error) {
	n := 0
	err := a.update("prune activity items", func(tx *bolt.Tx) error {
		n = 0
		b, times := tx.Bucket(bucketActivityItems), tx.Bucket(bucketActivityItemTimes)
		if b == nil || times == nil {
			return nil
		}
		limit := nanos(before)
		c := times.Cursor()
		for k, _ := c.First(); len(k) >= 8 && int64(getU64(k[:8])) < limit; k, _ = c.First() {
			key := append([]byte(nil), k[8:]...)
			if err := c.Delete(); err != nil {
				return err
			}
			if err := b.Delete(key); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func writtenKey(connector, key string) []byte { return []byte(connector + "\x00" + key) }

// Written returns what was written for key on connector; ok false when
// nothing was, not even an intent.
func (a *Activities) Written(connector, key string) (w WrittenActivity, ok bool, err error) {
	err = a.view("read written activity "+key, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketActivityWritten)
		if b == nil {
			return nil
		}
		v := b.Get(writtenKey(connector, key))
		if v == nil {
			return nil
		}
		ok = true
		return unmarshal(v, &w)
	})
	return w, ok, err
}

// Intend records that key is about to be written on connector for the
// first time: after a crash, the intent says to look for the activity
// before creating it again. An existing entry is kept.
func (a *Activities) Intend(connector, key, recordID string) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("intend activity: %w", err)
	}
	return a.update("intend activity "+key, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketActivityWritten)
		if err != nil {
			return err
		}
		k := writtenKey(connector, key)
		if b.Get(k) != nil {
			return nil
		}
		raw, err := json.Marshal(WrittenActivity{Intent: true, RecordID: recordID})
		if err != nil {
			return err
		}
		return b.Put(k, raw)
	})
}

// Wrote records the activity written for key on connector, and counts it
// as logged (first is true: the key's first activity id) or updated.
func (a *Activities) Wrote(connector, key string, w WrittenActivity, first bool) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("record written activity: %w", err)
	}
	return a.update("record written activity "+key, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketActivityWritten)
		if err != nil {
			return err
		}
		w.Intent = false
		if w.WrittenAt.IsZero() {
			w.WrittenAt = a.now()
		}
		raw, err := json.Marshal(w)
		if err != nil {
			return err
		}
		if err := b.Put(writtenKey(connector, key), raw); err != nil {
			return err
		}
		return addCounts(tx, connector, func(c *ActivityCounts) {
			if first {
				c.Logged++
			} else {
				c.Updated++
			}
		})
	})
}

// Count adds to connector's skipped or failed figures.
func (a *Activities) Count(connector string, skipped, failed int64) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("count activities: %w", err)
	}
	return a.update("count activities of "+connector, func(tx *bolt.Tx) error {
		return addCounts(tx, connector, func(c *ActivityCounts) { c.Skipped += skipped; c.Failed += failed })
	})
}

func addCounts(tx *bolt.Tx, connector string, fn func(*ActivityCounts)) error {
	b, err := tx.CreateBucketIfNotExists(bucketActivityCounts)
	if err != nil {
		return err
	}
	var c ActivityCounts
	if v := b.Get([]byte(connector)); v != nil {
		if err := unmarshal(v, &c); err != nil {
			return err
		}
	}
	fn(&c)
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return b.Put([]byte(connector), raw)
}

// Counts returns connector's figures.
func (a *Activities) Counts(connector string) (ActivityCounts, error) {
	var c ActivityCounts
	err := a.view("read activity counts of "+connector, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketActivityCounts); b != nil {
			if v := b.Get([]byte(connector)); v != nil {
				return unmarshal(v, &c)
			}
		}
		return nil
	})
	return c, err
}

// Position returns the catch-up position stored under name (nil when
// none).
func (a *Activities) Position(name string) ([]byte, error) {
	var out []byte
	err := a.view("read activity position "+name, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketActivityPosition); b != nil {
			if v := b.Get([]byte(name)); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	return out, err
}

// SetPosition stores the catch-up position under name.
func (a *Activities) SetPosition(name string, pos []byte) error {
	return a.update("set activity position "+name, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketActivityPosition)
		if err != nil {
			return err
		}
		return b.Put([]byte(name), pos)
	})
}

// bucketActivityPairs holds the (workspace number, participant) pairs
// with activity: key -> the latest activity's time (8 bytes, Unix ns).
var bucketActivityPairs = []byte("activityPairs")

// TouchPair records activity of the pair key at at (kept when later
// than what is stored).
func (a *Activities) TouchPair(key string, at time.Time) error {
	return a.update("touch activity pair", func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketActivityPairs)
		if err != nil {
			return err
		}
		if v := b.Get([]byte(key)); v != nil && int64(getU64(v)) >= nanos(at) {
			return nil
		}
		return b.Put([]byte(key), u64(uint64(nanos(at))))
	})
}

// Pairs returns the pairs with activity after since, and forgets those
// without.
func (a *Activities) Pairs(since time.Time) ([]string, error) {
	var out []string
	err := a.update("read activity pairs", func(tx *bolt.Tx) error {
		out = nil
		b := tx.Bucket(bucketActivityPairs)
		if b == nil {
			return nil
		}
		var stale [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if int64(getU64(v)) > nanos(since) {
				out = append(out, string(k))
			} else {
				stale = append(stale, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
