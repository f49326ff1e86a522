package hubspot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// importContacts adds n contacts, 2 ms apart from at, as a large import
// does, and returns their ids.
func importContacts(srv *hubspotemu.Server, at time.Time, n int) []string {
	ids := make([]string, 0, n)
	for i := range n {
		srv.SetClock(at.Add(time.Duration(2*i) * time.Millisecond))
		ids = append(ids, srv.Add(map[string]string{"email": fmt.Sprintf("import%d@example.com", i)}))
	}
	return ids
}

// TestLookbackRereadIsBounded: after a first sync of a 10,300-contact
// import made in the look-back window (30 s, pages of 200), the next
// pass re-reads the span only when a count shows a contact there that
// was not read: one count and the new window's page instead of 52 pages. A contact the search
// index showed late, or a span whose contacts vanished, is re-read as
// before, and no change is lost.
func TestLookbackRereadIsBounded(t *testing.T) {
	const imported = 10300
	for _, tc := range []struct {
		name string
		lag  time.Duration
		// between runs after the first sync, before the second.
		between func(t *testing.T, srv *hubspotemu.Server, ids []string) (changed []string)
		// wantSearches is the second pass's search calls; wantReread
		// whether it reads the imported contacts again.
		wantSearches int
		wantReread   bool
	}{
		{name: "quiet portal", wantSearches: 2},
		{name: "imported and older contacts edited since", wantSearches: 2,
			between: func(t *testing.T, srv *hubspotemu.Server, ids []string) []string {
				old := srv.Contacts()[0].ID // made before the import
				changed := []string{old, ids[7], ids[5000], ids[imported-1]}
				for _, id := range changed {
					if err := srv.Update(id, map[string]string{"firstname": "edited"}); err != nil {
						t.Fatal(err)
					}
				}
				return append(changed, srv.Add(map[string]string{"email": "new@example.com"}))
			}},
		{name: "contacts indexed late are read", lag: 3 * time.Second, wantSearches: 1 + (imported+MaxPageSize-1)/MaxPageSize, wantReread: true},
		{name: "a merge in the span re-reads it", wantSearches: 1 + (imported+MaxPageSize-1)/MaxPageSize, wantReread: true,
			between: func(t *testing.T, srv *hubspotemu.Server, ids []string) []string {
				won, err := srv.Merge(ids[10], ids[20])
				if err != nil {
					t.Fatal(err)
				}
				return []string{won}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, hubspotemu.Options{Seed: 21, SearchLag: tc.lag}, func(s *Settings) { s.Lookback = 30 * time.Second })
			addAt(f.srv, base.Add(-time.Hour), map[string]string{"email": "old@example.com"})
			ids := importContacts(f.srv, base, imported) // base to base+20.6 s
			end := base.Add(22 * time.Second)
			f.srv.SetClock(end)
			first := f.changes(t, "")
			late := 0
			if tc.lag > 0 {
				late = int((tc.lag - 1400*time.Millisecond) / (2 * time.Millisecond)) // added after end - lag
			}
			if got, want := len(first.records), imported+1-late; got < want-1 || got > want+1 {
				t.Fatalf("first sync read %d contacts, want about %d", got, want)
			}
			t.Logf("first sync: %d search calls", f.srv.Stats().Requests[hubspotemu.RouteSearch])

			f.srv.Advance(2 * time.Minute)
			var changed []string
			if tc.between != nil {
				changed = tc.between(t, f.srv, ids)
			}
			f.srv.Advance(time.Second)
			f.srv.ResetStats()
			second := f.changes(t, first.checkpoint)
			searches := f.srv.Stats().Requests[hubspotemu.RouteSearch]
			t.Logf("second pass: %d search calls, %d records", searches, len(second.records))
			if searches != tc.wantSearches {
				t.Errorf("second pass made %d search calls, want %d", searches, tc.wantSearches)
			}
			got := second.ids()
			for _, id := range changed {
				if !slices.Contains(got, id) {
					t.Errorf("changed contact %s not read", id)
				}
			}
			if tc.lag > 0 {
				for _, id := range ids[imported-late+1:] {
					if !slices.Contains(got, id) && !slices.Contains(first.ids(), id) {
						t.Fatalf("late contact %s never read", id)
					}
				}
			}
			if reread := slices.Contains(got, ids[100]); reread != tc.wantReread {
				t.Errorf("imported contact %s re-read: %v, want %v (%d records)", ids[100], reread, tc.wantReread, len(got))
			}

			// The pass after re-reads at most the few contacts changed in
			// the second pass's span (fewer than a page: no count).
			f.srv.Advance(time.Minute)
			f.srv.ResetStats()
			third := f.changes(t, second.checkpoint)
			live := 0
			for _, r := range third.records {
				if !r.Deleted {
					live++
				}
			}
			if n := f.srv.Stats().Requests[hubspotemu.RouteSearch]; live > len(changed) || n != 1 {
				t.Errorf("third pass read %d contacts with %d searches, want at most %d with 1", live, n, len(changed))
			}
		})
	}
}

// TestLookbackCountSurvivesResume: a first sync stopped between pages
// and resumed from its last checkpoint counts the span as one read
// would: the next quiet pass makes the count and one search, and reads
// nothing again.
func TestLookbackCountSurvivesResume(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 22}, func(s *Settings) { s.Lookback = 30 * time.Second; s.PageSize = 100 })
	ids := importContacts(f.srv, base, 1000)
	f.srv.SetClock(base.Add(5 * time.Second))
	var got []string
	cp := ""
	stop := errors.New("stop")
	err := f.src.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			got = append(got, r.ID)
		}
		cp = b.Checkpoint
		if len(got) >= 300 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("changes: %v, want the callback's error", err)
	}
	rest := f.changes(t, cp)
	assertOnce(t, append(got, rest.ids()...), ids)

	f.srv.Advance(time.Minute)
	f.srv.ResetStats()
	again := f.changes(t, rest.checkpoint)
	if n := f.srv.Stats().Requests[hubspotemu.RouteSearch]; len(again.records) != 0 || n != 2 {
		t.Errorf("pass after the resumed sync read %d contacts with %d searches, want none with 2 (the count and the window)", len(again.records), n)
	}
}

// TestLookbackTail: what a span counts, by second or, for a long
// look-back, by a wider step; moving the span forgets what is before it.
func TestLookbackTail(t *testing.T) {
	for _, tc := range []struct {
		name        string
		until       int64
		lookback    time.Duration
		reads       [][2]int64 // lastmodifieddate ms, id
		moveUntil   int64      // when set, move the span to end here
		wantFrom    int64
		wantSeconds []second
	}{
		{name: "by second", until: 100_500, lookback: 30 * time.Second,
			reads:    [][2]int64{{70_000, 9}, {70_999, 3}, {99_000, 12}, {69_999, 1}},
			wantFrom: 70_000, wantSeconds: []second{{At: 70_000, Count: 2, MinID: 3, MaxID: 9}, {At: 99_000, Count: 1, MinID: 12, MaxID: 12}}},
		{name: "moved: earlier seconds forgotten", until: 100_500, lookback: 30 * time.Second, moveUntil: 129_100,
			reads:    [][2]int64{{70_000, 9}, {99_000, 12}, {99_500, 4}},
			wantFrom: 99_000, wantSeconds: []second{{At: 99_000, Count: 2, MinID: 4, MaxID: 12}}},
		{name: "long look-back counts by 20 s", until: 1_000_000, lookback: 10 * time.Minute,
			reads:    [][2]int64{{400_000, 5}, {419_999, 6}, {420_000, 7}, {999_999, 8}},
			wantFrom: 400_000, wantSeconds: []second{{At: 400_000, Count: 2, MinID: 5, MaxID: 6}, {At: 420_000, Count: 1, MinID: 7, MaxID: 7}, {At: 980_000, Count: 1, MinID: 8, MaxID: 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(tc.until, tc.lookback.Milliseconds())
			for _, r := range tc.reads {
				tl.add(r[0], fmt.Sprint(r[1]))
			}
			if tc.moveUntil != 0 {
				tl = tl.moveTo(newTail(tc.moveUntil, tc.lookback.Milliseconds()))
			}
			if tl.From != tc.wantFrom || !slices.Equal(tl.Seconds, tc.wantSeconds) {
				t.Errorf("span from %d %+v, want from %d %+v", tl.From, tl.Seconds, tc.wantFrom, tc.wantSeconds)
			}
		})
	}
}

// TestLookbackLongKeepsCheckpointSmall: with a look-back of 10 minutes
// the checkpoint holds a few dozen counts, whatever was read, and the
// count still spares the re-read.
func TestLookbackLongKeepsCheckpointSmall(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 23}, func(s *Settings) { s.Lookback = 10 * time.Minute; s.PageSize = 100 })
	for i := range 1200 {
		f.srv.SetClock(base.Add(time.Duration(i) * 400 * time.Millisecond)) // over 8 minutes
		f.srv.Add(map[string]string{"email": fmt.Sprintf("l%d@example.com", i)})
	}
	f.srv.SetClock(base.Add(9 * time.Minute))
	first := f.changes(t, "")
	if n := len(first.checkpoint); n > 2500 {
		t.Errorf("checkpoint of %d characters after 1,200 contacts: %s", n, first.checkpoint)
	}
	f.srv.Advance(time.Minute)
	f.srv.ResetStats()
	again := f.changes(t, first.checkpoint)
	if n := f.srv.Stats().Requests[hubspotemu.RouteSearch]; len(again.records) != 0 || n != 2 {
		t.Errorf("next pass read %d contacts with %d searches, want none with 2", len(again.records), n)
	}
}
