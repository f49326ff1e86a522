package state

import (
	"testing"
	"time"
)

func TestHistoryIsABoundedRing(t *testing.T) {
	s, clk := openTest(t)
	if got, err := s.History.Since(time.Time{}); err != nil || len(got) != 0 {
		t.Fatalf("History of a new file = %v, %v", got, err)
	}
	start := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	// Two samples in one minute add their calls, keep the later totals.
	must(t, s.History.Add(HistoryPoint{Minute: start, APICalls: 5, DeadLetters: 1}))
	must(t, s.History.Add(HistoryPoint{Minute: start.Add(20 * time.Second), APICalls: 7, Throttled: 1, DeadLetters: 2, Conflicts: 3}))
	s = reopen(t, s, clk)
	got, err := s.History.Since(time.Time{})
	must(t, err)
	want := HistoryPoint{Minute: start.Truncate(time.Minute), APICalls: 12, Throttled: 1, DeadLetters: 2, Conflicts: 3}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("History = %+v, want [%+v]", got, want)
	}

	// A day and a half of minutes: the ring keeps the last day only.
	for i := 1; i <= HistoryMinutes*3/2; i++ {
		must(t, s.History.Add(HistoryPoint{Minute: start.Add(time.Duration(i) * time.Minute), APICalls: int64(i)}))
	}
	got, err = s.History.Since(time.Time{})
	must(t, err)
	if len(got) != HistoryMinutes {
		t.Fatalf("%d points kept, want %d", len(got), HistoryMinutes)
	}
	first := start.Truncate(time.Minute).Add(time.Duration(HistoryMinutes/2+1) * time.Minute)
	if !got[0].Minute.Equal(first) || got[0].APICalls != int64(HistoryMinutes/2+1) {
		t.Errorf("oldest point %+v, want minute %s", got[0], first)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Minute.Sub(got[i-1].Minute) != time.Minute {
			t.Fatalf("points %d and %d are not a minute apart: %s, %s", i-1, i, got[i-1].Minute, got[i].Minute)
		}
	}
	since := got[len(got)-10].Minute
	if recent, _ := s.History.Since(since); len(recent) != 10 {
		t.Errorf("History(since the 10th newest) = %d points", len(recent))
	}
}
