package salesforce

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforcetest"
)

// TestSharedModstampAcrossPages reads 25,000 Contacts, 5,000 of them
// (the 10,001st to the 15,000th) sharing one SystemModstamp, in pages of
// 2,000, so that the group spans the page boundaries at 12,000 and
// 14,000: once straight through, and once for each of those boundaries
// stopped right after it (the batch recorded, as a crash would leave it)
// and resumed from the checkpoint. The org counts the records it sends:
// each is read exactly once, in 13 query calls for the straight read.
func TestSharedModstampAcrossPages(t *testing.T) {
	org := salesforcetest.NewServer(salesforcetest.Options{})
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
	calls := after.Requests[salesforcetest.RouteQueryAll] + after.Requests[salesforcetest.RouteQueryMore] -
		before.Requests[salesforcetest.RouteQueryAll] - before.Requests[salesforcetest.RouteQueryMore]
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
