package hubspot

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspottest"
)

// TestChangesReportsMerges: after a merge, the next read names each
// contact merged away as a Deleted record whose MergedInto is the merged
// contact, just before it, in both of HubSpot's merge behaviours (a new
// contact, or the primary kept); reading it again names them again, and
// Get of a merged-away id finds nothing of its own.
func TestChangesReportsMerges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		legacy bool
	}{{"merge makes a new contact", false}, {"merge keeps the primary", true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, hubspottest.Options{Seed: 11, LegacyMerge: tc.legacy}, nil)
			ids := addAt(f.srv, base, map[string]string{"email": "a@example.com"}, map[string]string{"email": "b@example.com"}, map[string]string{"email": "c@example.com"})
			f.srv.SetClock(base.Add(time.Minute))
			first := f.changes(t, "")
			f.srv.Advance(time.Minute)
			won, err := f.srv.Merge(ids[1], ids[0])
			if err != nil {
				t.Fatal(err)
			}
			f.srv.Advance(time.Minute)
			r := f.changes(t, first.checkpoint)

			var gone []string
			for _, id := range ids[:2] {
				if id != won {
					gone = append(gone, id)
				}
			}
			var deleted, live []string
			for _, rec := range r.records {
				switch {
				case rec.Deleted:
					if rec.MergedInto != won || rec.Fields["hs_object_id"] != rec.ID {
						t.Errorf("merged-away record %+v, want MergedInto %s", rec, won)
					}
					deleted = append(deleted, rec.ID)
				default:
					live = append(live, rec.ID)
				}
			}
			if !slices.Equal(deleted, gone) || !slices.Equal(live, []string{won}) {
				t.Fatalf("read deleted %v and live %v, want merged away %v and the merged contact %s", deleted, live, gone, won)
			}
			if last := r.records[len(r.records)-1]; last.ID != won {
				t.Errorf("the merged contact comes at %v, want after the contacts merged into it", r.ids())
			}
			for _, rec := range r.records {
				if _, ok := rec.Fields[mergedProperty]; ok {
					t.Errorf("record %s carries %s among its fields", rec.ID, mergedProperty)
				}
			}
			got, err := f.src.Get(context.Background(), append(slices.Clone(gone), won))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].ID != won {
				t.Errorf("Get of %v and %s: %v, want only the merged contact", gone, won, got)
			}
		})
	}
}

// TestMergedAwayIDs: the property's ids are read whatever their spacing,
// order or repeats; the contact's own id and non-numbers are left out.
func TestMergedAwayIDs(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        []string
	}{
		{"none", "", nil},
		{"one", "17", []string{"17"}},
		{"ascending, repeats dropped", " 30; 12;30 ;x;", []string{"12", "30"}},
		{"own id left out", "5;99", []string{"5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.value
			o := object{ID: "99", Properties: map[string]*string{mergedProperty: &v}}
			var got []string
			for _, rec := range mergedAway(o, (&Source{}).record(o)) {
				got = append(got, rec.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q: %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}
