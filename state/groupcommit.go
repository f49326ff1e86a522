package state

import (
	"runtime"
	"sync"
)

// maxEventGroup bounds the events committed in one transaction.
const maxEventGroup = 1000

// enqueueReq is one Inbox.Enqueue call waiting in an eventQueue.
type enqueueReq struct {
	e   InboxEvent
	seq uint64
	dup bool
	err error
	// done receives true when the call must lead the next commit, false
	// when its event was committed (or failed) by another call's commit.
	done chan bool
}

// eventQueue groups concurrent Inbox.Enqueue calls into shared commits, so
// that deliveries arriving together wait for one fsync instead of one each.
// No goroutine and no timer: the first call to arrive while no commit runs
// leads and commits what is queued; calls arriving meanwhile queue, and
// when the commit ends the leader hands the lead to the oldest of them,
// which commits them all. When the last group held more than one event
// (deliveries arrive together), a new leader first yields the processor
// once, so that the deliveries already being handled join its group rather
// than the next commit: fewer commits, and fsyncs, for a burst. A call
// therefore waits at most for the commit in progress and then its own, and
// it returns only after the commit that holds its event returned.
type eventQueue struct {
	mu      sync.Mutex
	pending []*enqueueReq
	busy    bool // a leader is committing or about to
	// lastGroup is the size of the last commit's group.
	lastGroup int
}

// run queues req and returns when commit has handled it.
func (q *eventQueue) run(req *enqueueReq, commit func([]*enqueueReq)) {
	q.mu.Lock()
	q.pending = append(q.pending, req)
	if q.busy {
		q.mu.Unlock()
		if lead := <-req.done; !lead {
			return
		}
		q.mu.Lock()
	}
	q.busy = true
	if q.lastGroup > 1 && len(q.pending) < maxEventGroup {
		// Deliveries are arriving together: let those being handled now
		// (runnable, on their way here) queue before the commit, so that
		// one fsync covers them instead of the next commit. Alone, a call
		// commits at once.
		q.mu.Unlock()
		runtime.Gosched()
		q.mu.Lock()
	}
	n := min(len(q.pending), maxEventGroup)
	q.lastGroup = n
	group := append([]*enqueueReq(nil), q.pending[:n]...)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	q.mu.Unlock()

	commit(group)

	q.mu.Lock()
	if len(q.pending) > 0 {
		q.pending[0].done <- true // busy stays set: the lead passes on
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	for _, r := range group {
		if r != req {
			r.done <- false
		}
	}
}
