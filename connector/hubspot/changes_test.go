package hubspot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// assertOnce fails unless got holds each of want exactly once and nothing
// else.
func assertOnce(t *testing.T, got, want []string) {
	t.Helper()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for _, id := range want {
		if seen[id] != 1 {
			t.Errorf("contact %s read %d times, want once", id, seen[id])
		}
		delete(seen, id)
	}
	for id, n := range seen {
		t.Errorf("contact %s read %d times, want never", id, n)
	}
}

func TestChangesInitialReadPastSearchCap(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 1}, nil)
	// 25,000 contacts, five per lastmodifieddate.
	const stamps, perStamp = 5000, 5
	var want []string
	for i := range stamps {
		f.srv.SetClock(base.Add(time.Duration(i) * time.Millisecond))
		for j := range perStamp {
			want = append(want, f.srv.Add(map[string]string{"email": fmt.Sprintf("c%d@example.com", i*perStamp+j)}))
		}
	}
	f.srv.SetClock(base.Add(time.Hour))
	f.srv.ResetStats()

	r := f.changes(t, "")

	assertOnce(t, r.ids(), want)
	n := len(want)
	searches := f.srv.Stats().Requests[hubspotemu.RouteSearch]
	if lo, hi := n/MaxPageSize, n/MaxPageSize+10; searches < lo || searches > hi {
		t.Errorf("%d search calls for %d contacts, want between %d and %d", searches, n, lo, hi)
	}
	if got := f.srv.Stats().Responses[hubspotemu.RouteSearch][400]; got != 0 {
		t.Errorf("%d searches answered 400 (the 10,000 cap), want 0", got)
	}
	for i, b := range r.batches {
		if len(b.Records) > MaxPageSize {
			t.Fatalf("batch %d has %d records, over a page", i, len(b.Records))
		}
	}
	// The window is closed: the next read starts at its end, and finds
	// nothing new.
	f.srv.ResetStats()
	again := f.changes(t, r.checkpoint)
	if len(again.records) != 0 {
		t.Errorf("second read returned %d contacts, want 0", len(again.records))
	}
	if got := f.srv.Stats().Requests[hubspotemu.RouteSearch]; got != 1 {
		t.Errorf("second read made %d searches, want 1", got)
	}
}

func TestChangesOneTimestampOverSearchCap(t *testing.T) {
	// A bulk update can touch more than 10,000 contacts at one instant:
	// a window that only moves on lastmodifieddate would loop or skip.
	f := newFixture(t, hubspotemu.Options{Seed: 2}, nil)
	f.srv.SetClock(base)
	var want []string
	for i := range 10500 {
		want = append(want, f.srv.Add(map[string]string{"firstname": fmt.Sprint(i)}))
	}
	f.srv.SetClock(base.Add(time.Minute))
	r := f.changes(t, "")
	assertOnce(t, r.ids(), want)
	if got := f.srv.Stats().Requests[hubspotemu.RouteSearch]; got > 10500/MaxPageSize+2 {
		t.Errorf("%d searches, want at most %d", got, 10500/MaxPageSize+2)
	}
}

func TestChangesTiesAcrossBatchBoundaryAndResume(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 3}, func(s *Settings) { s.PageSize = 10 })
	var want []string
	want = append(want, addAt(f.srv, base, make([]map[string]string, 3)...)...)
	tie := make([]map[string]string, 35) // 35 contacts at one instant, across 4 pages
	want = append(want, addAt(f.srv, base.Add(time.Second), tie...)...)
	want = append(want, addAt(f.srv, base.Add(2*time.Second), make([]map[string]string, 4)...)...)
	f.srv.SetClock(base.Add(time.Minute))

	// The reader stops after two batches (a crash), then resumes from the
	// last checkpoint it got.
	var got []string
	cp := ""
	stop := errors.New("stop")
	err := f.src.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			got = append(got, r.ID)
		}
		cp = b.Checkpoint
		if len(got) >= 20 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("changes: %v, want the callback's error", err)
	}
	// A contact changed meanwhile, among those already read.
	f.srv.Advance(time.Second)
	if err := f.srv.Update(got[0], map[string]string{"firstname": "changed"}); err != nil {
		t.Fatal(err)
	}
	r := f.changes(t, cp)
	got = append(got, r.ids()...)
	assertOnce(t, got, want)

	// The changed contact comes with the next window.
	f.srv.Advance(time.Second)
	next := f.changes(t, r.checkpoint)
	if !slices.Equal(next.ids(), []string{got[0]}) {
		t.Errorf("next window read %v, want only the changed contact %s", next.ids(), got[0])
	}
}

func TestChangesIncrementalReturnsOnlyChanged(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 4}, func(s *Settings) { s.Lookback = 30 * time.Second })
	var ids []string
	for i := range 300 {
		ids = append(ids, addAt(f.srv, base.Add(time.Duration(i)*time.Second), map[string]string{"email": fmt.Sprintf("p%d@example.com", i)})...)
	}
	// The first read ends at base+10min; contacts changed in its last 30 s
	// are read again by the next read, and no others.
	end := base.Add(10 * time.Minute)
	f.srv.SetClock(end.Add(-10 * time.Second))
	if err := f.srv.Update(ids[5], map[string]string{"phone": "+1 555 0100"}); err != nil {
		t.Fatal(err)
	}
	f.srv.SetClock(end)
	first := f.changes(t, "")
	assertOnce(t, first.ids(), ids)

	f.srv.SetClock(end.Add(time.Hour))
	changed := []string{ids[10], ids[200], ids[299]}
	for _, id := range changed {
		if err := f.srv.Update(id, map[string]string{"lastname": "Updated"}); err != nil {
			t.Fatal(err)
		}
	}
	created := f.srv.Add(map[string]string{"email": "new@example.com"})
	f.srv.Advance(time.Second)
	second := f.changes(t, first.checkpoint)
	assertOnce(t, second.ids(), append(changed, created, ids[5]))
	for _, r := range second.records {
		if r.ID == ids[10] && r.Fields["lastname"] != "Updated" {
			t.Errorf("contact %s lastname = %v, want Updated", r.ID, r.Fields["lastname"])
		}
		if r.Deleted {
			t.Errorf("contact %s marked deleted", r.ID)
		}
	}
}

func TestChangesLookbackCatchesSearchLag(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lookback time.Duration
		wantLate bool
	}{
		{"lookback longer than the lag catches the late contact", 30 * time.Second, true},
		{"no lookback loses it", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, hubspotemu.Options{Seed: 5, SearchLag: 20 * time.Second}, func(s *Settings) { s.Lookback = tc.lookback })
			early := addAt(f.srv, base, map[string]string{"firstname": "early"})
			late := addAt(f.srv, base.Add(20*time.Second), map[string]string{"firstname": "late"})
			// At +25 s the late contact is changed but not yet searchable.
			f.srv.SetClock(base.Add(25 * time.Second))
			first := f.changes(t, "")
			assertOnce(t, first.ids(), early)

			f.srv.SetClock(base.Add(60 * time.Second))
			second := f.changes(t, first.checkpoint)
			if got := slices.Contains(second.ids(), late[0]); got != tc.wantLate {
				t.Errorf("late contact read = %v, want %v (read %v)", got, tc.wantLate, second.ids())
			}
		})
	}
}

func TestChangesArchivedComeOutAsDeleted(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 6}, func(s *Settings) { s.Lookback = 5 * time.Second })
	ids := addAt(f.srv, base, make([]map[string]string, 6)...)
	f.srv.SetClock(base.Add(time.Minute))
	first := f.changes(t, "")
	assertOnce(t, first.ids(), ids)

	archivedAt := base.Add(2 * time.Minute)
	f.srv.SetClock(archivedAt)
	for _, id := range ids[:2] {
		if err := f.srv.Archive(id); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.Advance(time.Second)
	second := f.changes(t, first.checkpoint)
	assertOnce(t, second.ids(), ids[:2])
	for _, r := range second.records {
		if !r.Deleted {
			t.Errorf("contact %s not marked deleted", r.ID)
		}
		if !r.UpdatedAt.Equal(archivedAt) {
			t.Errorf("contact %s UpdatedAt = %s, want its archivedAt %s", r.ID, r.UpdatedAt, archivedAt)
		}
	}

	// Another archival at the same instant as the ones already read: only
	// it comes out.
	f.srv.SetClock(archivedAt)
	if err := f.srv.Archive(ids[2]); err != nil {
		t.Fatal(err)
	}
	f.srv.SetClock(archivedAt.Add(2 * time.Second))
	third := f.changes(t, second.checkpoint)
	assertOnce(t, third.ids(), ids[2:3])

	// An archival that shows up late, stamped before the newest one read
	// but within the look-back: it comes out.
	f.srv.SetClock(archivedAt.Add(-4 * time.Second))
	if err := f.srv.Archive(ids[3]); err != nil {
		t.Fatal(err)
	}
	f.srv.SetClock(archivedAt.Add(3 * time.Second))
	late := f.changes(t, third.checkpoint)
	assertOnce(t, late.ids(), ids[3:4])
	third = late

	// Nothing new: nothing comes out.
	f.srv.Advance(time.Minute)
	fourth := f.changes(t, third.checkpoint)
	assertOnce(t, fourth.ids(), nil)

	// Restored, then archived again: it comes back, then goes again.
	if err := f.srv.Restore(ids[0]); err != nil {
		t.Fatal(err)
	}
	f.srv.Advance(time.Second)
	fifth := f.changes(t, fourth.checkpoint)
	assertOnce(t, fifth.ids(), ids[:1])
	if fifth.records[0].Deleted {
		t.Errorf("restored contact marked deleted")
	}
	f.srv.Advance(time.Second)
	if err := f.srv.Archive(ids[0]); err != nil {
		t.Fatal(err)
	}
	f.srv.Advance(time.Second)
	sixth := f.changes(t, fifth.checkpoint)
	if len(sixth.records) != 1 || sixth.records[0].ID != ids[0] || !sixth.records[0].Deleted {
		t.Errorf("re-archived contact: read %+v, want it deleted", sixth.records)
	}
}

func TestChangesArchivalDuringReadSkipsNothing(t *testing.T) {
	// Offset paging would skip live contacts when some already read are
	// archived mid-read; keyset paging does not.
	f := newFixture(t, hubspotemu.Options{Seed: 7}, func(s *Settings) { s.PageSize = 10 })
	ids := addAt(f.srv, base, make([]map[string]string, 50)...)
	f.srv.SetClock(base.Add(time.Minute))
	var got []string
	batches := 0
	err := f.src.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		batches++
		for _, r := range b.Records {
			if !r.Deleted {
				got = append(got, r.ID)
			}
		}
		if batches == 1 {
			for _, id := range ids[:5] {
				if err := f.srv.Archive(id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	assertOnce(t, got, ids)
}

func TestChangesArchivedInterval(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 8}, func(s *Settings) { s.ArchivedInterval = time.Hour })
	ids := addAt(f.srv, base, make([]map[string]string, 3)...)
	f.srv.SetClock(base.Add(time.Minute))
	first := f.changes(t, "")
	if err := f.srv.Archive(ids[0]); err != nil {
		t.Fatal(err)
	}
	f.srv.Advance(time.Minute)
	f.srv.ResetStats()
	second := f.changes(t, first.checkpoint)
	if len(second.records) != 0 || f.srv.Stats().Requests[hubspotemu.RouteListArchived] != 0 {
		t.Errorf("scan within the interval: read %v with %d archived calls, want none",
			second.ids(), f.srv.Stats().Requests[hubspotemu.RouteListArchived])
	}
	f.srv.Advance(time.Hour)
	third := f.changes(t, second.checkpoint)
	if len(third.records) != 1 || !third.records[0].Deleted || third.records[0].ID != ids[0] {
		t.Errorf("scan after the interval read %+v, want %s deleted", third.records, ids[0])
	}
}

func TestChangesBadCheckpoint(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{}, nil)
	for _, cp := range []string{"{", `{"search":{"since":10,"until":5}}`, `{"search":{"since":1,"until":5,"after":"x"}}`,
		`{"search":{"since":1000,"tail":{"from":2000}}}`, `{"search":{"since":1000,"tail":{"from":-5}}}`} {
		err := f.src.Changes(context.Background(), cp, func(context.Context, connector.Batch) error { return nil })
		if err == nil {
			t.Errorf("checkpoint %s: no error", cp)
		}
	}
}

func TestSnapshotReadsEveryLiveContact(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 9}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 1050)...)
	for _, id := range ids[:7] {
		if err := f.srv.Archive(id); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.ResetStats()
	var got []string
	err := f.src.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error {
		if b.Checkpoint != "" {
			t.Errorf("snapshot batch with checkpoint %q", b.Checkpoint)
		}
		for _, r := range b.Records {
			got = append(got, r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	assertOnce(t, got, ids[7:])
	if n := f.srv.Stats().Requests[hubspotemu.RouteList]; n != 11 {
		t.Errorf("%d list calls for 1,043 contacts, want 11", n)
	}
}

func TestMisbehavingServerDoesNotLoop(t *testing.T) {
	// A server that answers the same page, with paging.next, forever.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"total":2,"results":[{"id":"5","properties":{"hs_object_id":"5","lastmodifieddate":"2025-03-01T12:00:00.000Z"}}],"paging":{"next":{"after":"1"}}}`)
	}))
	defer srv.Close()
	set := NewSettings()
	set.Token, set.BaseURL = "pat-x", srv.URL
	set.RateLimit, set.SearchRateLimit = 100000, 100000
	src, err := Open(context.Background(), connector.Options{Name: "loop", Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	batches := 0
	fn := func(context.Context, connector.Batch) error { batches++; return nil }
	if err := src.Changes(context.Background(), "", fn); err == nil || !strings.Contains(err.Error(), "refusing to loop") {
		t.Errorf("changes: %v after %d batches, want a refusal to loop", err, batches)
	}
	if err := src.Snapshot(context.Background(), fn); err == nil || !strings.Contains(err.Error(), "refusing to loop") {
		t.Errorf("snapshot: %v, want a refusal to loop", err)
	}
}
