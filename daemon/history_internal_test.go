package daemon

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/state"
)

// Calls are charted in the minute they were made, whenever the samples
// are taken, and the charts include what no sample wrote yet.
func TestHistoryCountsCallsInTheirMinute(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "s.db"), state.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	h := &history{d: &Daemon{store: st, log: logrus.New(), connectors: []*Connector{{Name: "crm"}}}, now: func() time.Time { return clock }, pending: map[int64]state.HistoryPoint{}}

	h.call(201)
	clock = clock.Add(40 * time.Second) // 10:01:10
	h.call(429)
	h.call(200)
	// 10:00 had no sample: its point has calls and no totals.
	want := []state.HistoryPoint{
		{Minute: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), APICalls: 1, NoTotals: true},
		{Minute: time.Date(2026, 11, 23, 10, 1, 0, 0, time.UTC), APICalls: 2, Throttled: 1},
	}
	got, err := h.withCurrent(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("before any sample: %+v, want %+v", got, want)
	}

	h.sample() // one sample, a minute and more after the first call
	stored, err := st.History.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored[0] != want[0] || stored[1] != want[1] {
		t.Fatalf("stored: %+v, want %+v", stored, want)
	}
	h.call(200) // still 10:01: it adds to the stored minute
	got, err = h.withCurrent(stored)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].APICalls != 3 || got[0] != want[0] {
		t.Errorf("after the sample and one more call: %+v", got)
	}

	// A dead letter appears at 10:01; calls of 10:01 written in the next
	// minute's sample keep 10:01's totals.
	if _, err := st.DeadLetters.Add(state.DeadLetter{Connector: "crm", Operation: "sync", Key: "row-1", Reason: "refused"}); err != nil {
		t.Fatal(err)
	}
	h.sample() // 10:01: one dead letter
	h.call(200)
	clock = clock.Add(time.Minute) // 10:02:10
	h.sample()
	stored, err = st.History.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored[1].APICalls != 4 || stored[1].DeadLetters != 1 || stored[1].NoTotals || stored[2].DeadLetters != 1 {
		t.Errorf("stored after two more samples: %+v", stored)
	}
}
