package state

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"
)

// benchEvent is an inbox event of realistic size: a contact.updated
// delivery's body of about 1.5 KiB.
func benchEvent(i int) InboxEvent {
	return InboxEvent{
		ID: fmt.Sprintf("msg_%016x", i), Type: "contact.updated", ContactID: fmt.Sprintf("CT%016x", i%5000),
		ContactUpdatedAt: newClock().Now(), Body: bytes.Repeat([]byte("x"), 1500),
	}
}

// BenchmarkEnqueueEvent is the webhook receiver's one transaction per
// delivery, with fsync as the daemon runs it (the event is durable before
// the 2xx): the dedup look-up, the seen mark and the inbox append. Its
// time bounds the receiver's events per second on this disk.
func BenchmarkEnqueueEvent(b *testing.B) {
	s, _ := openTest(b, func(o *Options) { o.NoSync = false })
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, dup, err := s.Inbox.Enqueue(benchEvent(i)); err != nil || dup {
			b.Fatal(dup, err)
		}
		i++
	}
}

// BenchmarkEnqueueEventNoSync is the same transaction without fsync: the
// cost of the transaction itself, apart from the disk's flush.
func BenchmarkEnqueueEventNoSync(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, dup, err := s.Inbox.Enqueue(benchEvent(i)); err != nil || dup {
			b.Fatal(dup, err)
		}
		i++
	}
}

// BenchmarkCommitReverse100 is the applier's commit of one round of 100
// contacts, with fsync: links stored and events acknowledged together.
func BenchmarkCommitReverse100(b *testing.B) {
	s, _ := openTest(b, func(o *Options) { o.NoSync = false })
	b.ReportAllocs()
	next := 0
	for b.Loop() {
		b.StopTimer()
		c := ReverseCommit{}
		for j := 0; j < 100; j++ {
			seq, _, err := s.Inbox.Enqueue(benchEvent(next))
			if err != nil {
				b.Fatal(err)
			}
			c.Links = append(c.Links, ReverseLink{Link: benchLink(next % 5000)})
			c.Ack = append(c.Ack, seq)
			next++
		}
		b.StartTimer()
		if err := s.Reverse.Commit(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueEventParallel is the receiver under concurrent
// deliveries, with fsync: calls that arrive together share one commit
// (group commit), so the events per second are no longer bounded by one
// fsync per event.
func BenchmarkEnqueueEventParallel(b *testing.B) {
	s, _ := openTest(b, func(o *Options) { o.NoSync = false })
	b.ReportAllocs()
	b.SetParallelism(8) // 16 senders on 2 cores, like the bench's burst
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, dup, err := s.Inbox.Enqueue(benchEvent(int(next.Add(1)))); err != nil || dup {
				b.Error(dup, err)
				return
			}
		}
	})
}
