package salesforce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

// deletedOf returns the ids of the Deleted records among recs.
func deletedOf(recs []connector.Record) map[string]bool {
	out := map[string]bool{}
	for _, r := range recs {
		if r.Deleted {
			out[r.ID] = true
		}
	}
	return out
}

// deleteAndPurge deletes a new record and empties the Recycle Bin, so
// that only getDeleted can list the deletion.
func deleteAndPurge(t *testing.T, org *salesforceemu.Server, name string) string {
	t.Helper()
	id := org.Add("Contact", map[string]any{"LastName": name})
	if err := org.Delete(id); err != nil {
		t.Fatal(err)
	}
	org.EmptyRecycleBin(org.Now().Add(time.Millisecond), false)
	return id
}

// TestDeletionScanAtMinutePrecision runs passes 61 to 119 s apart (and a
// few others), from clocks at several seconds of the minute: getDeleted
// ignores the seconds of start and end and refuses a start not more than
// one minute before the end, so the connector compares and sends whole
// minutes. No call is refused, and every deletion that only getDeleted
// lists arrives.
func TestDeletionScanAtMinutePrecision(t *testing.T) {
	cases := []struct {
		name  string
		first time.Time
		gap   time.Duration
	}{
		{"61 s from a whole minute", time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 61 * time.Second},
		{"75 s from :30", time.Date(2026, 1, 5, 9, 0, 30, 0, time.UTC), 75 * time.Second},
		{"90 s from :59", time.Date(2026, 1, 5, 9, 0, 59, 0, time.UTC), 90 * time.Second},
		{"119 s from :01", time.Date(2026, 1, 5, 9, 0, 1, 0, time.UTC), 119 * time.Second},
		{"119.9 s from :00.5", time.Date(2026, 1, 5, 9, 0, 0, 5e8, time.UTC), 119900 * time.Millisecond},
		{"30 s from :45", time.Date(2026, 1, 5, 9, 0, 45, 0, time.UTC), 30 * time.Second},
		{"5 minutes", time.Date(2026, 1, 5, 9, 0, 17, 0, time.UTC), 5 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			org := salesforceemu.NewServer(salesforceemu.Options{})
			t.Cleanup(org.Close)
			org.SetClock(c.first)
			s, _ := openOn(t, org, nil)
			org.Add("Contact", map[string]any{"LastName": "First"})
			org.Advance(time.Second)
			_, cp, err := readAll(t, s, "") // the first window sets the scan's start
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			got := map[string]bool{}
			for i := range 8 {
				org.Advance(c.gap / 2)
				want[deleteAndPurge(t, org, fmt.Sprint("D", i))] = true
				org.Advance(c.gap - c.gap/2)
				recs, next, err := readAll(t, s, cp)
				if err != nil {
					t.Fatalf("pass %d (%s): %v", i+2, org.Now().Format("15:04:05.000"), err)
				}
				cp = next
				for id := range deletedOf(recs) {
					got[id] = true
				}
			}
			org.Advance(3 * time.Minute) // a later window covers the last minutes
			recs, _, err := readAll(t, s, cp)
			if err != nil {
				t.Fatal(err)
			}
			for id := range deletedOf(recs) {
				got[id] = true
			}
			st := org.Stats()
			if n := st.Responses[salesforceemu.RouteDeleted][http.StatusBadRequest]; n != 0 {
				t.Errorf("%d getDeleted calls refused, want none", n)
			}
			for id := range want {
				if !got[id] {
					t.Errorf("deletion of %s (purged from the Recycle Bin) never arrived", id)
				}
			}
			t.Logf("%d getDeleted calls for 9 passes", st.Requests[salesforceemu.RouteDeleted])
		})
	}
}

// TestScanRange checks the range sent to getDeleted: whole minutes, and
// none when Salesforce would refuse it.
func TestScanRange(t *testing.T) {
	at := func(m, s, ms int) time.Time { return time.Date(2026, 1, 5, 9, m, s, ms*1e6, time.UTC) }
	cases := []struct {
		name               string
		from, until        time.Time
		wantStart, wantEnd time.Time
		ok                 bool
	}{
		{"61 s from a whole minute is one minute", at(0, 0, 0), at(1, 1, 0), at(0, 0, 0), at(1, 0, 0), false},
		{"119 s is one minute", at(0, 0, 0), at(1, 59, 999), at(0, 0, 0), at(1, 0, 0), false},
		{"120 s is two minutes", at(0, 0, 0), at(2, 0, 0), at(0, 0, 0), at(2, 0, 0), true},
		{"61 s across two boundaries is two minutes", at(0, 59, 0), at(2, 0, 0), at(0, 0, 0), at(2, 0, 0), true},
		{"seconds and milliseconds dropped", at(3, 12, 345), at(9, 59, 999), at(3, 0, 0), at(9, 0, 0), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start, end, ok := scanRange(c.from, c.until)
			if !start.Equal(c.wantStart) || !end.Equal(c.wantEnd) || ok != c.ok {
				t.Errorf("scanRange(%s, %s) = %s, %s, %v; want %s, %s, %v", c.from.Format("15:04:05.000"), c.until.Format("15:04:05.000"),
					start.Format("15:04:05"), end.Format("15:04:05"), ok, c.wantStart.Format("15:04:05"), c.wantEnd.Format("15:04:05"), c.ok)
			}
		})
	}
}

// TestFailedDeletionScanDoesNotFreezeTheWindow bulk-edits 599 records (a
// window of three pages of 200), reads the first page and stops (as a
// crash would), then makes getDeleted fail at the end of the resumed
// window: refused (the delete log was purged past the scan's start), or
// unavailable through every retry. The resumed read still records the
// window's last pages and closes it; later passes go on with new
// windows, never asking for the refused range again, and every edited
// record arrives, as does a deletion only getDeleted lists once it
// answers again.
func TestFailedDeletionScanDoesNotFreezeTheWindow(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(org *salesforceemu.Server)
		// caughtUp: the deletion purged before the failure arrives in a
		// later window (an unavailable scan is tried again from the same
		// start; a refused one cannot list what the log lost).
		caughtUp bool
	}{
		{"refused: the delete log was purged past the start", func(org *salesforceemu.Server) {
			org.EmptyRecycleBin(org.Now().Add(time.Millisecond), true)
		}, false},
		{"unavailable through every retry", func(org *salesforceemu.Server) {
			org.Fail(salesforceemu.RouteDeleted, 6, http.StatusServiceUnavailable, "SERVER_UNAVAILABLE", "try again later")
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			org := salesforceemu.NewServer(salesforceemu.Options{})
			t.Cleanup(org.Close)
			var ids []string
			for i := range 599 {
				ids = append(ids, org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)}))
			}
			org.Advance(time.Second)
			s, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 })
			_, cp, err := readAll(t, s, "")
			if err != nil {
				t.Fatal(err)
			}
			org.Advance(3 * time.Minute)
			for i, id := range ids { // a bulk edit: 599 records in two seconds
				if i == 300 {
					org.Advance(time.Second)
				}
				if err := org.Update(id, map[string]any{"Title": "bulk"}); err != nil {
					t.Fatal(err)
				}
			}
			gone := deleteAndPurge(t, org, "Purged")
			org.Advance(2 * time.Minute)
			stop := errors.New("crash")
			arrived := map[string]int{}
			err = s.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
				for _, r := range b.Records {
					arrived[r.ID]++
				}
				cp = b.Checkpoint
				return stop
			})
			if !errors.Is(err, stop) {
				t.Fatalf("first read: %v", err)
			}
			c.break_(org)
			deletedSeen := map[string]bool{}
			for pass := range 4 {
				recs, next, err := readAll(t, s, cp)
				if err != nil {
					t.Fatalf("pass %d after the failure: %v", pass+1, err)
				}
				if pass == 0 && next == cp {
					t.Fatalf("the resumed window's checkpoint did not move: %s", cp)
				}
				cp = next
				for _, r := range recs {
					if r.Deleted {
						deletedSeen[r.ID] = true
						continue
					}
					arrived[r.ID]++
				}
				org.Advance(2 * time.Minute)
			}
			missing := 0
			for _, id := range ids {
				if arrived[id] != 1 {
					missing++
				}
			}
			if missing != 0 {
				t.Errorf("%d of 599 edited records did not arrive exactly once", missing)
			}
			if deletedSeen[gone] != c.caughtUp {
				t.Errorf("the purged deletion arrived: %v, want %v", deletedSeen[gone], c.caughtUp)
			}
			st := org.Stats()
			if n := st.Responses[salesforceemu.RouteDeleted][http.StatusBadRequest]; n > 1 {
				t.Errorf("getDeleted refused %d times: the refused range was asked for again", n)
			}
			if n := st.Responses[salesforceemu.RouteDeleted][http.StatusOK]; n < 2 {
				t.Errorf("%d getDeleted calls answered after the failure, want the later windows to scan", n)
			}
		})
	}
}
