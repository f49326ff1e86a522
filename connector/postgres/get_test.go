package postgres_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
)

// TestGetMatchesChanges reads rows by id and checks that each record is
// the one Changes gives for that row, soft-deleted rows included, and
// that missing ids are left out.
func TestGetMatchesChanges(t *testing.T) {
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			st := v.newStore(t).(*tableStore)
			ids := st.Insert(t,
				map[string]any{"name": "Ann", "email": "ann@example.com"},
				map[string]any{"name": "Bob", "phone": "+447700900123"},
				map[string]any{"name": "Cy"})
			if v.soft {
				st.Delete(t, ids[2])
			}
			src := st.Open(t).(*postgres.Source)
			ctx := context.Background()
			byID := map[string]connector.Record{}
			err := src.Changes(ctx, "", func(_ context.Context, b connector.Batch) error {
				for _, r := range b.Records {
					byID[r.ID] = r
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.Get(ctx, []string{ids[0], v.missingID, ids[1], ids[2]})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 {
				t.Fatalf("Get returned %d records, want 3 (the missing id left out): %+v", len(got), got)
			}
			for _, r := range got {
				if !reflect.DeepEqual(r, byID[r.ID]) {
					t.Errorf("Get(%s) = %+v\nChanges gave %+v", r.ID, r, byID[r.ID])
				}
				if r.ID == ids[2] && r.Deleted != v.soft {
					t.Errorf("record %s Deleted = %v, want %v", r.ID, r.Deleted, v.soft)
				}
			}
			if none, err := src.Get(ctx, nil); err != nil || len(none) != 0 {
				t.Errorf("Get(nil) = %v, %v", none, err)
			}
		})
	}
}
