package state

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestMarkEventSeen(t *testing.T) {
	s, clk := openTest(t)
	now := clk.Now()
	tests := []struct {
		name        string
		id          string
		expires     time.Time
		wantAlready bool
	}{
		{"first sight", "msg_1", now.Add(time.Hour), false},
		{"second sight", "msg_1", now.Add(2 * time.Hour), true},
		{"another id", "msg_2", now.Add(time.Minute), false},
		{"already expired when marked", "msg_3", now.Add(-time.Second), false},
		{"expired one again", "msg_3", now.Add(time.Hour), false},
		{"then seen", "msg_3", now.Add(time.Hour), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			already, err := s.Inbox.MarkSeen(tt.id, tt.expires)
			if err != nil || already != tt.wantAlready {
				t.Fatalf("MarkEventSeen = %v, %v; want %v", already, err, tt.wantAlready)
			}
			if seen, _ := s.Inbox.Seen(tt.id); seen != tt.expires.After(now) {
				t.Fatalf("SeenEvent = %v", seen)
			}
		})
	}
	if _, err := s.Inbox.MarkSeen("", now.Add(time.Hour)); err == nil {
		t.Error("empty id accepted")
	}
	// A repeat does not extend the expiry: msg_1 expires after one hour.
	clk.Advance(time.Hour + time.Second)
	if seen, _ := s.Inbox.Seen("msg_1"); seen {
		t.Error("msg_1 still seen after its expiry")
	}
	if seen, _ := s.Inbox.Seen("msg_3"); seen {
		t.Error("msg_3 still seen after its expiry")
	}
}

func TestPruneSeenEvents(t *testing.T) {
	s, clk := openTest(t)
	now := clk.Now()
	for i := range 100 {
		_, err := s.Inbox.MarkSeen(fmt.Sprintf("e%d", i), now.Add(time.Duration(i+1)*time.Minute))
		must(t, err)
	}
	// Re-marking an expired id moves it in the expiry index; the old
	// index entry must not linger.
	clk.Advance(5 * time.Minute)
	_, err := s.Inbox.MarkSeen("e0", clk.Now().Add(10*time.Hour))
	must(t, err)

	stored := func(id string) bool {
		var ok bool
		must(t, s.db.View(func(tx *bolt.Tx) error {
			ok = tx.Bucket(bucketEvents).Get([]byte(id)) != nil
			return nil
		}))
		return ok
	}
	tests := []struct {
		name      string
		at        time.Time
		wantPrune int
		gone      []string
		kept      []string
	}{
		{"nothing expired yet", now, 0, nil, []string{"e0", "e1"}},
		{"first ten minutes", now.Add(10 * time.Minute), 9, []string{"e1", "e9"}, []string{"e0", "e10"}},
		{"again at the same time", now.Add(10 * time.Minute), 0, nil, []string{"e10"}},
		{"all but the re-marked one", now.Add(100 * time.Minute), 90, []string{"e10", "e99"}, []string{"e0"}},
		{"everything", now.Add(24 * time.Hour), 1, []string{"e0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.Inbox.PruneSeen(tt.at)
			if err != nil || n != tt.wantPrune {
				t.Fatalf("PruneSeenEvents = %d, %v; want %d", n, err, tt.wantPrune)
			}
			for _, id := range tt.gone {
				if stored(id) {
					t.Errorf("%s not pruned", id)
				}
			}
			for _, id := range tt.kept {
				if !stored(id) {
					t.Errorf("%s pruned too early", id)
				}
			}
		})
	}
	// Both buckets are empty: no expiry entry outlived its id.
	must(t, s.db.View(func(tx *bolt.Tx) error {
		if a, b := tx.Bucket(bucketEvents).Stats().KeyN, tx.Bucket(bucketEventExpiry).Stats().KeyN; a+b != 0 {
			return fmt.Errorf("%d ids and %d expiry entries left", a, b)
		}
		return nil
	}))
}

func TestEnqueueEventDedupOrderAndAck(t *testing.T) {
	s, clk := openTest(t, func(o *Options) { o.EventTTL = time.Hour })
	at := clk.Now()
	events := []InboxEvent{
		{ID: "w1", Type: "contact.updated", ContactID: "c1", ContactUpdatedAt: at, Body: []byte(`{"a":1}`)},
		{ID: "w2", Type: "contact.deleted", ContactID: "c2", ContactUpdatedAt: at.Add(time.Second), Body: []byte(`{}`)},
		{ID: "w1", Type: "contact.updated", ContactID: "c1", Body: []byte(`{"a":1}`)}, // redelivery
		{ID: "w3", Type: "contact.updated", ContactID: "c1", Body: []byte("not json\x00")},
	}
	wantDup := []bool{false, false, true, false}
	var seqs []uint64
	for i, e := range events {
		seq, dup, err := s.Inbox.Enqueue(e)
		must(t, err)
		if dup != wantDup[i] {
			t.Fatalf("event %d (%s): duplicate = %v", i, e.ID, dup)
		}
		if dup && seq != 0 {
			t.Fatalf("duplicate got seq %d", seq)
		}
		if !dup {
			if len(seqs) > 0 && seq <= seqs[len(seqs)-1] {
				t.Fatalf("seq %d not increasing after %v", seq, seqs)
			}
			seqs = append(seqs, seq)
		}
	}
	if _, _, err := s.Inbox.Enqueue(InboxEvent{}); err == nil {
		t.Error("event without id accepted")
	}

	pending, err := s.Inbox.Pending(0)
	must(t, err)
	if len(pending) != 3 || pending[0].ID != "w1" || pending[1].ID != "w2" || pending[2].ID != "w3" {
		t.Fatalf("pending = %+v", pending)
	}
	p0 := pending[0]
	if p0.Seq != seqs[0] || p0.Type != "contact.updated" || p0.ContactID != "c1" ||
		!p0.ContactUpdatedAt.Equal(at) || string(p0.Body) != `{"a":1}` || !p0.ReceivedAt.Equal(at) {
		t.Errorf("first event = %+v", p0)
	}
	if string(pending[2].Body) != "not json\x00" {
		t.Errorf("body = %q", pending[2].Body)
	}
	if two, _ := s.Inbox.Pending(2); len(two) != 2 || two[1].ID != "w2" {
		t.Errorf("PendingEvents(2) = %+v", two)
	}

	p0.Attempts++
	must(t, s.Inbox.Update(p0))
	must(t, s.Inbox.Ack(pending[1].Seq))
	must(t, s.Inbox.Ack(pending[1].Seq)) // twice is harmless
	if err := s.Inbox.Update(pending[1]); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateEvent of an acked event = %v, want ErrNotFound", err)
	}
	pending, _ = s.Inbox.Pending(0)
	if len(pending) != 2 || pending[0].Attempts != 1 || pending[1].ID != "w3" {
		t.Fatalf("after ack and update: %+v", pending)
	}
	if n, _ := s.Inbox.Count(); n != 2 {
		t.Errorf("CountPendingEvents = %d", n)
	}

	// An acked event stays deduplicated until its id expires (EventTTL).
	if _, dup, _ := s.Inbox.Enqueue(events[1]); !dup {
		t.Error("redelivery of an acked event was enqueued")
	}
	clk.Advance(time.Hour + time.Second)
	if _, dup, _ := s.Inbox.Enqueue(events[1]); dup {
		t.Error("event still deduplicated after EventTTL")
	}
}

func TestInboxSurvivesReopen(t *testing.T) {
	s, clk := openTest(t)
	for i := range 5 {
		_, _, err := s.Inbox.Enqueue(InboxEvent{ID: fmt.Sprintf("w%d", i), ContactID: "c"})
		must(t, err)
	}
	first, _ := s.Inbox.Pending(1)
	must(t, s.Inbox.Ack(first[0].Seq))

	s = reopen(t, s, clk)
	pending, err := s.Inbox.Pending(0)
	must(t, err)
	if len(pending) != 4 || pending[0].ID != "w1" || pending[3].ID != "w4" {
		t.Fatalf("pending after reopen = %+v", pending)
	}
	if _, dup, _ := s.Inbox.Enqueue(InboxEvent{ID: "w0"}); !dup {
		t.Error("dedup forgotten across reopen")
	}
	seq, dup, err := s.Inbox.Enqueue(InboxEvent{ID: "w5"})
	if err != nil || dup || seq <= pending[3].Seq {
		t.Errorf("new event after reopen: seq %d (last %d), dup %v, %v", seq, pending[3].Seq, dup, err)
	}
}

func TestEnqueueEventConcurrentDeliveries(t *testing.T) {
	// Receivers on several goroutines, 30% of the events delivered twice
	// in shuffled order: each id appended exactly once, in the order of
	// its first successful enqueue.
	s, _ := openTest(t)
	const n = 300
	var deliveries []string
	for i := range n {
		id := fmt.Sprintf("w%03d", i)
		deliveries = append(deliveries, id)
		if i%10 < 3 {
			deliveries = append(deliveries, id)
		}
	}
	rand.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	var (
		mu       sync.Mutex
		appended = map[string]int{}
		dups     int
	)
	var group sync.WaitGroup
	work := make(chan string)
	for range 4 {
		group.Go(func() {
			for id := range work {
				_, dup, err := s.Inbox.Enqueue(InboxEvent{ID: id})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if dup {
					dups++
				} else {
					appended[id]++
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range deliveries {
		work <- id
	}
	close(work)
	group.Wait()
	if len(appended) != n || dups != len(deliveries)-n {
		t.Fatalf("%d ids appended, %d duplicates; want %d and %d", len(appended), dups, n, len(deliveries)-n)
	}
	for id, c := range appended {
		if c != 1 {
			t.Errorf("%s appended %d times", id, c)
		}
	}
	pending, _ := s.Inbox.Pending(0)
	if len(pending) != n {
		t.Fatalf("%d events pending, want %d", len(pending), n)
	}
}
