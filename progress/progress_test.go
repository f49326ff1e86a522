package progress

import (
	"math"
	"testing"
	"time"
)

// clock is a manual clock with an API call counter.
type clock struct {
	t     time.Time
	calls int64
}

func (c *clock) now() time.Time { return c.t }

func newTracker(c *clock, limit float64) *Tracker {
	return New(Options{Now: c.now, Calls: func() int64 { return c.calls }, RateLimit: limit})
}

func TestNothingRunning(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 10)
	tr.Add(5)
	tr.SetWrites(map[string]int64{"created": 1})
	if _, ok := tr.Snapshot(); ok {
		t.Fatal("a tracker that never started reports a pass")
	}
	if _, ok := tr.Final(); ok {
		t.Fatal("a tracker that never started reports a finished pass")
	}
	tr.Start("run")
	tr.Add(3)
	tr.Finish()
	if _, ok := tr.Snapshot(); ok {
		t.Fatal("a finished pass is still reported")
	}
	if f, ok := tr.Final(); !ok || f.Done != 3 || f.Phase != PhaseFinished || f.Kind != "run" {
		t.Fatalf("Final = %+v, %v; want the run's 3 records, finished", f, ok)
	}
	var none *Tracker
	none.Start("run")
	none.Add(1)
	if _, ok := none.Snapshot(); ok {
		t.Fatal("a nil tracker reports a pass")
	}
}

func TestUnknownTotalHasNoETA(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 0)
	tr.Start("resync")
	tr.Phase(PhaseReading)
	for range 10 {
		c.t = c.t.Add(time.Second)
		tr.Add(100)
	}
	s, ok := tr.Snapshot()
	if !ok {
		t.Fatal("no pass")
	}
	if s.Total != nil || s.ETASeconds != nil {
		t.Errorf("total %v, eta %v: want both unknown", s.Total, s.ETASeconds)
	}
	if s.Done != 1000 || math.Abs(s.RatePerSecond-100) > 0.01 || s.Phase != PhaseReading || s.Kind != "resync" {
		t.Errorf("snapshot %+v: want 1000 done at 100/s while reading", s)
	}
}

func TestETAFollowsTheRecentRate(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 0)
	tr.Start("run")
	tr.Total(10000, false)
	// A fast start (a burst), then a steady 50 records a second for
	// longer than the window: the ETA follows the steady pace.
	c.t = c.t.Add(time.Second)
	tr.Add(2000)
	for range 60 {
		c.t = c.t.Add(time.Second)
		tr.Add(50)
	}
	s, _ := tr.Snapshot()
	eta, ok := s.ETA()
	if !ok {
		t.Fatal("no ETA")
	}
	want := time.Duration(float64(10000-5000)/50) * time.Second
	if d := eta - want; d > time.Second || d < -time.Second {
		t.Errorf("ETA %s, want %s (5000 left at 50/s)", eta, want)
	}
	if f, _ := s.Fraction(); f != 0.5 {
		t.Errorf("fraction %v, want 0.5", f)
	}
}

func TestRateIsCappedByTheAPILimit(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 10) // 10 calls a second
	tr.Start("run")
	tr.Total(1000, true)
	// The limiter's burst let 100 creates (one call each) through in one
	// second: the pace to expect is the limit's 10 records a second.
	c.t = c.t.Add(time.Second)
	c.calls += 100
	tr.Add(100)
	tr.SetWrites(map[string]int64{"created": 1, "updated": 0})
	s, _ := tr.Snapshot()
	if math.Abs(s.RatePerSecond-10) > 0.01 {
		t.Errorf("rate %v, want the limit's 10/s", s.RatePerSecond)
	}
	if eta, _ := s.ETA(); eta != 90*time.Second {
		t.Errorf("ETA %s, want 90s", eta)
	}
	if !s.TotalIsEstimate || s.Writes["created"] != 1 || len(s.Writes) != 1 || s.APICalls != 100 {
		t.Errorf("snapshot %+v", s)
	}
}

func TestDonePastTheTotal(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 0)
	tr.Start("run")
	tr.Total(10, true)
	c.t = c.t.Add(time.Second)
	tr.Add(12)
	s, _ := tr.Snapshot()
	if s.Total == nil || *s.Total != 12 || *s.ETASeconds != 0 {
		t.Errorf("total %v eta %v: want the 12 reached and no time left", s.Total, s.ETASeconds)
	}
}

func TestStepsWithinABatch(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	tr := newTracker(c, 0)
	tr.Start("run")
	for range 3 {
		tr.Step() // three of a batch's records written
	}
	if s, _ := tr.Snapshot(); s.Done != 3 {
		t.Fatalf("done %d after 3 steps", s.Done)
	}
	tr.Add(100) // the batch of 100 is done (97 of them unchanged)
	tr.Step()
	if s, _ := tr.Snapshot(); s.Done != 101 {
		t.Fatalf("done %d, want 100 + 1 step", s.Done)
	}
}
