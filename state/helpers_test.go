package state

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// clock is a settable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openTest opens a fresh store in a temporary folder, closed at the end
// of the test.
func openTest(t testing.TB, opts ...func(*Options)) (*Store, *clock) {
	t.Helper()
	clk := newClock()
	o := Options{NoSync: true, Now: clk.Now}
	for _, f := range opts {
		f(&o)
	}
	s, err := Open(filepath.Join(t.TempDir(), "state.db"), o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, clk
}

// reopen closes s and opens its file again with the same clock.
func reopen(t testing.TB, s *Store, clk *clock) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	s2, err := Open(s.Path(), Options{NoSync: true, Now: clk.Now})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
