package reconcile

import (
	"sync"
)

// tally is what a pass did so far; every stage counts into it.
type tally struct {
	mu  sync.Mutex
	sum Summary
}

func (t *tally) count(f func(s *Summary)) {
	t.mu.Lock()
	f(&t.sum)
	t.mu.Unlock()
}

// writes is the count of each kind of write so far.
func (t *tally) writes() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sum.Writes()
}
