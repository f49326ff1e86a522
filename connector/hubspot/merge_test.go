package hubspot

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
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
			f := newFixture(t, hubspotemu.Options{Seed: 11, LegacyMerge: tc.legacy}, nil)
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

// TestArchivedMergeBeforeSearchShowsIt: when HubSpot lists merged-away
// contacts as archived (not documented either way) and the archived scan
// sees them before the search index shows the merged contact, they come
// as Deleted records naming the merged contact all the same, found by one
// batch read; plain archivals stay plain deletions.
func TestArchivedMergeBeforeSearchShowsIt(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 12, ArchiveMerged: true, SearchLag: 20 * time.Second}, func(s *Settings) { s.Lookback = 30 * time.Second })
	ids := addAt(f.srv, base, map[string]string{"email": "a@example.com"}, map[string]string{"email": "b@example.com"}, map[string]string{"email": "c@example.com"})
	f.srv.SetClock(base.Add(time.Minute))
	first := f.changes(t, "")
	if len(first.records) != 3 {
		t.Fatalf("first read %v, want the 3 contacts", first.ids())
	}
	f.srv.Advance(time.Minute)
	won, err := f.srv.Merge(ids[0], ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Archive(ids[2]); err != nil {
		t.Fatal(err)
	}
	f.srv.Advance(time.Second) // the merged contact is not searchable yet
	f.srv.ResetStats()
	r := f.changes(t, first.checkpoint)
	got := map[string]string{}
	for _, rec := range r.records {
		if !rec.Deleted {
			t.Errorf("contact %s read before the index shows it", rec.ID)
			continue
		}
		got[rec.ID] = rec.MergedInto
	}
	want := map[string]string{ids[0]: won, ids[1]: won, ids[2]: ""}
	if !maps.Equal(got, want) {
		t.Errorf("deletions %v, want %v (merged into %s, and a plain archival)", got, want, won)
	}
	if n := f.srv.Stats().Requests[hubspotemu.RouteBatchRead]; n != 1 {
		t.Errorf("%d batch reads to tell merges from archivals, want 1", n)
	}
	// Once searchable, the merged contact comes with its merge trace.
	f.srv.Advance(time.Minute)
	later := f.changes(t, r.checkpoint)
	if !slices.Contains(later.ids(), won) {
		t.Errorf("the merged contact %s is never read: %v", won, later.ids())
	}
}
