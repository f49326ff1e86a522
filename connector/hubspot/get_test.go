package hubspot

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// TestGetReadsByIDInBatches reads 150 contacts, an archived one and a
// missing one by id: two batch read calls, the live contacts only, each
// equal to what a search read gives.
func TestGetReadsByIDInBatches(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{}, nil)
	var ids []string
	for i := range 150 {
		ids = append(ids, f.srv.Add(map[string]string{"email": fmt.Sprintf("c%d@example.com", i), "firstname": fmt.Sprint("N", i)}))
	}
	if err := f.srv.Archive(ids[3]); err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	err := f.src.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			byID[r.ID] = fmt.Sprint(r.Fields, r.UpdatedAt)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := f.srv.Stats().Requests[hubspotemu.RouteBatchRead]
	got, err := f.src.Get(context.Background(), append(append([]string{}, ids...), "999999999", "not-a-number"))
	if err != nil {
		t.Fatal(err)
	}
	if calls := f.srv.Stats().Requests[hubspotemu.RouteBatchRead] - before; calls != 2 {
		t.Errorf("%d batch read calls for 152 ids, want 2", calls)
	}
	if len(got) != 149 {
		t.Fatalf("Get returned %d records, want 149 (archived and missing ids left out)", len(got))
	}
	var gotIDs []string
	for _, r := range got {
		gotIDs = append(gotIDs, r.ID)
		if r.ID == ids[3] {
			t.Errorf("archived contact %s returned", r.ID)
		}
		if want := byID[r.ID]; want != fmt.Sprint(r.Fields, r.UpdatedAt) {
			t.Errorf("Get(%s) = %v %v, a snapshot gave %s", r.ID, r.Fields, r.UpdatedAt, want)
		}
	}
	sort.Strings(gotIDs)
	if len(gotIDs) > 0 && gotIDs[0] == "" {
		t.Error("a record without id")
	}
}
