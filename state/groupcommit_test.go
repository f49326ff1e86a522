package state

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEventQueueGroupsWhileCommitting holds the first commit open while
// more calls arrive: they must all go into the next commit, together, and
// none may return before the commit that holds it has returned.
func TestEventQueueGroupsWhileCommitting(t *testing.T) {
	var q eventQueue
	release := make(chan struct{})
	var (
		mu       sync.Mutex
		groups   [][]string
		finished = map[string]bool{} // event id -> its commit returned
	)
	commit := func(reqs []*enqueueReq) {
		ids := make([]string, len(reqs))
		for i, r := range reqs {
			ids[i] = r.e.ID
		}
		mu.Lock()
		groups = append(groups, ids)
		first := len(groups) == 1
		mu.Unlock()
		if first {
			<-release
		}
		mu.Lock()
		for _, id := range ids {
			finished[id] = true
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	var early atomic.Int32
	call := func(id string) {
		defer wg.Done()
		q.run(&enqueueReq{e: InboxEvent{ID: id}, done: make(chan bool, 1)}, commit)
		mu.Lock()
		if !finished[id] {
			early.Add(1)
		}
		mu.Unlock()
	}
	wg.Add(1)
	go call("first")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(groups) == 1 })
	for i := range 10 {
		wg.Add(1)
		go call(fmt.Sprint(i))
	}
	waitFor(t, func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.pending) == 10 })
	close(release)
	wg.Wait()
	if len(groups) != 2 || len(groups[0]) != 1 || len(groups[1]) != 10 {
		t.Fatalf("commit groups %v, want [first] then the 10 that queued meanwhile", groups)
	}
	if n := early.Load(); n > 0 {
		t.Fatalf("%d calls returned before their commit did", n)
	}
	if q.busy || len(q.pending) != 0 {
		t.Fatalf("queue left busy=%v with %d pending", q.busy, len(q.pending))
	}
}

// TestEnqueueEventGroupFailure: when the shared transaction fails, every
// event of the group gets the error and none is in the inbox.
func TestEnqueueEventGroupFailure(t *testing.T) {
	s, _ := openTest(t)
	reqs := []*enqueueReq{{e: InboxEvent{ID: "a"}}, {e: InboxEvent{ID: "b"}}}
	must(t, s.Close()) // every transaction fails on a closed store
	s.Inbox.commitEvents(reqs)
	for _, r := range reqs {
		if r.err == nil || r.seq != 0 {
			t.Fatalf("event %s: seq %d err %v, want an error", r.e.ID, r.seq, r.err)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
