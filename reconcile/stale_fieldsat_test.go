package reconcile

import (
	"reflect"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// TestKeptFieldsAt: a streamed copy read again keeps, for each value the
// row still holds, the time the copy says the row held it from (its
// FieldsAt, else its own UpdatedAt): syncd's own write-back of another
// column since does not make the row's first name newer than an app edit.
func TestKeptFieldsAt(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 11, 27, 12, 0, s, 0, time.UTC) }
	rec := func(s int, fieldsAt map[string]time.Time, kv ...string) connector.Record {
		r := connector.Record{ID: "1", UpdatedAt: at(s), Fields: map[string]any{}, FieldsAt: fieldsAt}
		for i := 0; i < len(kv); i += 2 {
			r.Fields[kv[i]] = kv[i+1]
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		copy, now connector.Record
		want      map[string]time.Time
	}{
		{name: "a single version, another column written since",
			copy: rec(10, nil, "first_name", "T", "last_name", "L"), now: rec(20, nil, "first_name", "T", "last_name", "A"),
			want: map[string]time.Time{"first_name": at(10)}},
		{name: "the stream's own time of a value",
			copy: rec(15, map[string]time.Time{"first_name": at(5)}, "first_name", "T", "last_name", "L"), now: rec(20, nil, "first_name", "T", "last_name", "L"),
			want: map[string]time.Time{"first_name": at(5), "last_name": at(15)}},
		{name: "a value changed since counts from now",
			copy: rec(10, nil, "first_name", "T"), now: rec(20, nil, "first_name", "U"), want: nil},
		{name: "the row unchanged", copy: rec(10, nil, "first_name", "T"), now: rec(10, nil, "first_name", "T"), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keptFieldsAt(tc.copy, tc.now); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("keptFieldsAt = %v, want %v", got, tc.want)
			}
		})
	}
}
