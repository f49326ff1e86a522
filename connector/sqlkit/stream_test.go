package sqlkit_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// TestLatestPerIDKeepsEachFieldsOwnTime: a row streamed in several
// versions is handed over once, its last version, with the time each
// field came to hold its value: a later edit of another column moves the
// row's updated_at, not the time of the first name's edit.
func TestLatestPerIDKeepsEachFieldsOwnTime(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 27, 12, 0, s, 0, time.UTC) }
	v := func(id string, s int, first, company string) connector.Record {
		return connector.Record{ID: id, UpdatedAt: at(s), Fields: map[string]any{"id": id, "first_name": first, "company": company}}
	}
	for _, tc := range []struct {
		name string
		in   []connector.Record
		want map[string]map[string]time.Time // FieldsAt by id
	}{
		{name: "one version each", in: []connector.Record{v("1", 1, "Ada", "A"), v("2", 2, "Bo", "B")},
			want: map[string]map[string]time.Time{"1": nil, "2": nil}},
		{name: "first name, then company", in: []connector.Record{v("1", 1, "Ada", "A"), v("1", 5, "Ada", "Acme")},
			want: map[string]map[string]time.Time{"1": {"id": at(1), "first_name": at(1)}}},
		{name: "a value back to an older one counts from its return", in: []connector.Record{
			v("1", 1, "Ada", "A"), v("1", 3, "Bea", "A"), v("1", 5, "Ada", "Acme"), v("2", 6, "Bo", "B"), v("1", 7, "Ada", "Zed")},
			want: map[string]map[string]time.Time{"1": {"id": at(1), "first_name": at(5)}, "2": nil}},
		{name: "every field changed last", in: []connector.Record{v("1", 1, "Ada", "A"), {ID: "1", UpdatedAt: at(5), Fields: map[string]any{"id": "2x", "first_name": "Eve", "company": "E"}}},
			want: map[string]map[string]time.Time{"1": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sqlkit.LatestPerID(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("%d records, want %d", len(got), len(tc.want))
			}
			for _, r := range got {
				if w := tc.want[r.ID]; !reflect.DeepEqual(r.FieldsAt, w) {
					t.Errorf("record %s FieldsAt %v, want %v", r.ID, r.FieldsAt, w)
				}
			}
		})
	}
}
