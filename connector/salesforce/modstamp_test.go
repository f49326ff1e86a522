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

// TestSharedModstampAcrossPages reads 25,000 Contacts, 5,000 of them
// (the 10,001st to the 15,000th) sharing one SystemModstamp, in pages of
// 2,000, so that the group spans the page boundaries at 12,000 and
// 14,000: once straight through, and once for each of those boundaries
// stopped right after it (the batch recorded, as a crash would leave it)
// and resumed from the checkpoint. The org counts the records it sends:
// each is read exactly once, in 13 query calls for the straight read.
func TestSharedModstampAcrossPages(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	for i := range 25000 {
		if (i < 10000 || i >= 15000) && i%1000 == 0 {
			org.Advance(time.Second)
		}
		if i == 10000 {
			org.Advance(time.Second)
		}
		org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, nil, "LastName")

	exactlyOnce := func(what string) {
		t.Helper()
		reads := org.ReadCounts()
		more := 0
		for _, n := range reads {
			if n != 1 {
				more++
			}
		}
		if len(reads) != 25000 || more != 0 {
			t.Errorf("%s: %d records read, %d more than once; want 25,000 exactly once", what, len(reads), more)
		}
		org.ResetReadCounts()
	}
	before := org.Stats()
	recs, _, err := readAll(t, s, "")
	after := org.Stats()
	calls := after.Requests[salesforceemu.RouteQueryAll] + after.Requests[salesforceemu.RouteQueryMore] -
		before.Requests[salesforceemu.RouteQueryAll] - before.Requests[salesforceemu.RouteQueryMore]
	if err != nil || len(recs) != 25000 || calls != 13 {
		t.Fatalf("straight read: %d records in %d calls, %v; want 25,000 in 13", len(recs), calls, err)
	}
	exactlyOnce("straight read")

	stop := errors.New("crash")
	for _, pages := range []int{6, 7} { // stopped after 12,000 and 14,000 records
		var cp string
		n := 0
		err := s.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
			cp = b.Checkpoint
			if n++; n == pages {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) {
			t.Fatalf("read stopped after %d pages: %v", pages, err)
		}
		rest, _, err := readAll(t, s, cp)
		if err != nil || len(rest) != 25000-pages*2000 {
			t.Fatalf("resumed after %d pages: %d records, %v", pages, len(rest), err)
		}
		exactlyOnce(fmt.Sprintf("stopped after page %d and resumed", pages))
	}
}

// TestMillisecondModstampsAcrossPages reads 900 Contacts whose
// SystemModstamps carry milliseconds, as Salesforce's do: 300 a few
// milliseconds apart, 250 on one millisecond (across a page boundary),
// 350 more a few milliseconds apart, in pages of 200; once straight
// through and once stopped after every page and resumed from its
// checkpoint, then again on an org that refuses milliseconds in SOQL
// (which documents whole seconds), where a resumed query starts at its
// key's second. Each record is emitted exactly once, with its
// SystemModstamp to the millisecond; the checkpoints keep the
// milliseconds; where the org takes them, the org sends each record once.
func TestMillisecondModstampsAcrossPages(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	org.Advance(400 * time.Millisecond)
	for i := range 900 {
		switch {
		case i < 300:
			org.Advance(3 * time.Millisecond)
		case i == 300:
			org.Advance(time.Millisecond)
		case i >= 550:
			org.Advance(7 * time.Millisecond)
		}
		org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 }, "LastName")

	check := func(what string, recs []connector.Record) {
		t.Helper()
		n := map[string]int{}
		for _, r := range recs {
			n[r.ID]++
			if o, _ := org.Get(r.ID); !o.SystemModstamp.Equal(r.UpdatedAt) {
				t.Fatalf("%s: %s UpdatedAt %s, want its SystemModstamp %s", what, r.ID, r.UpdatedAt.Format(time.RFC3339Nano), o.SystemModstamp.Format(time.RFC3339Nano))
			}
		}
		more := 0
		for _, c := range n {
			if c != 1 {
				more++
			}
		}
		if len(n) != 900 || more != 0 {
			t.Errorf("%s: %d records, %d of them more than once; want 900 exactly once", what, len(n), more)
		}
	}
	recs, _, err := readAll(t, s, "")
	if err != nil {
		t.Fatal(err)
	}
	check("straight read", recs)

	stop := errors.New("crash")
	resumeEveryPage := func(s *Source, refuseMillis bool) ([]connector.Record, int) {
		t.Helper()
		var all []connector.Record
		cp, msKeys := "", 0
		for range 20 {
			if refuseMillis && cp != "" {
				if c, _ := parseCheckpoint(cp); c.TS.Nanosecond() != 0 {
					org.Fail(salesforceemu.RouteQueryAll, 1, http.StatusBadRequest, "MALFORMED_QUERY", "unexpected token: '.'")
					refuseMillis = false
				}
			}
			done := true
			err := s.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
				all = append(all, b.Records...)
				cp = b.Checkpoint
				c, _ := parseCheckpoint(cp)
				if !c.Until.IsZero() {
					done = false
					if c.TS.Nanosecond() != 0 {
						msKeys++
					}
					return stop
				}
				return nil
			})
			if err != nil && !errors.Is(err, stop) {
				t.Fatal(err)
			}
			if done {
				break
			}
		}
		return all, msKeys
	}
	org.ResetReadCounts()
	all, msKeys := resumeEveryPage(s, false)
	check("stopped after every page", all)
	if msKeys == 0 {
		t.Errorf("no checkpoint kept a key with milliseconds")
	}
	for id, n := range org.ReadCounts() {
		if n != 1 {
			t.Errorf("the org sent %s %d times, want once", id, n)
		}
	}

	strict, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 }, "LastName")
	all, _ = resumeEveryPage(strict, true)
	check("stopped after every page, milliseconds refused in SOQL", all)
	if !strict.secondLiterals.Load() {
		t.Errorf("the connector did not fall back to whole seconds")
	}
}
