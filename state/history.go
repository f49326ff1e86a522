package state

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The history behind the health page's charts is a ring of one point a
// minute over HistoryMinutes: slot (minute since the epoch mod
// HistoryMinutes) holds that minute's point, so the bucket never holds
// more than HistoryMinutes small entries, however long syncd runs. The
// bucket is created by its first write (an older syncd ignores it).
var bucketHistory = []byte("history") // slot(8) -> HistoryPoint JSON

// HistoryMinutes is the span of the history: 24 hours, a point a minute.
const HistoryMinutes = 24 * 60

// HistoryPoint is what syncd did and held during one minute.
type HistoryPoint struct {
	// Minute is the start of the minute (UTC, whole minute).
	Minute time.Time `json:"minute"`
	// APICalls counts the workspace calls made during the minute.
	APICalls int64 `json:"apiCalls"`
	// Throttled counts the calls the workspace answered 429.
	Throttled int64 `json:"throttled,omitempty"`
	// DeadLetters and Conflicts are the totals held at the minute's last
	// sample. A point added with NoTotals keeps those recorded before.
	DeadLetters int `json:"deadLetters"`
	Conflicts   int `json:"conflicts"`
	// NoTotals marks a point that only adds calls (History.Add); read
	// points with it set had no sample of their totals.
	NoTotals bool `json:"noTotals,omitempty"`
}

func historySlot(minute time.Time) []byte {
	m := minute.Unix() / 60
	return u64(uint64(m % HistoryMinutes))
}

// Add adds each point to the point of its minute, in one
// transaction: calls add up, the totals replace the ones recorded before
// in that minute (unless the point has NoTotals). A point of a minute one day older in the same slot is
// overwritten.
func (s *History) Add(points ...HistoryPoint) error {
	return s.update("record history", func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketHistory)
		if err != nil {
			return err
		}
		for _, p := range points {
			if err := addPoint(b, p); err != nil {
				return err
			}
		}
		return nil
	})
}

func addPoint(b *bolt.Bucket, p HistoryPoint) error {
	p.Minute = p.Minute.UTC().Truncate(time.Minute)
	key := historySlot(p.Minute)
	if raw := b.Get(key); raw != nil {
		var have HistoryPoint
		if err := unmarshal(raw, &have); err != nil {
			return fmt.Errorf("decode history point: %w", err)
		}
		if have.Minute.Equal(p.Minute) {
			p.APICalls += have.APICalls
			p.Throttled += have.Throttled
			if p.NoTotals {
				p.DeadLetters, p.Conflicts, p.NoTotals = have.DeadLetters, have.Conflicts, have.NoTotals
			}
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// Since returns the points of the minutes from since on, oldest first
// (minutes with no point are missing).
func (s *History) Since(since time.Time) ([]HistoryPoint, error) {
	var out []HistoryPoint
	err := s.view("read history", func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHistory)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, raw []byte) error {
			var p HistoryPoint
			if err := unmarshal(raw, &p); err != nil {
				return fmt.Errorf("decode history point: %w", err)
			}
			if !p.Minute.Before(since) {
				out = append(out, p)
			}
			return nil
		})
	})
	slices.SortFunc(out, func(a, b HistoryPoint) int { return a.Minute.Compare(b.Minute) })
	return out, err
}
