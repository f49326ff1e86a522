package reconcile

import (
	"reflect"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

// TestKeptFieldsAt: a streamed copy read again keeps, for each value the
// row still holds, the time the copy says the row held it from (its
// FieldsAt, else its own UpdatedAt): syncd's own write-back of another
// column since does not make the row's first name newer than an app edit.
func TestKeptFieldsAt(t *testing.T) {
	at := fieldsAtSecond
	rec := func(s int, fieldsAt map[string]time.Time, kv ...string) connector.Record {
		r := fieldsRecord(s, kv...)
		r.FieldsAt = fieldsAt
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

// TestReadAgain: a record read again in place of a stream's copy keeps
// the copy's times of the values it still holds, and marks the values
// that came after the copy as unsettled (their versions are still to
// come in the stream); a poll's copy read again marks none.
func TestReadAgain(t *testing.T) {
	at := fieldsAtSecond
	rec := func(s int, unsettled map[string]bool, kv ...string) connector.Record {
		r := fieldsRecord(s, kv...)
		r.Unsettled = unsettled
		return r
	}
	for _, tc := range []struct {
		name          string
		copy, now     connector.Record
		streamed      bool
		wantAt        map[string]time.Time
		wantUnsettled map[string]bool
	}{
		{name: "a name edited after the streamed copy",
			copy: rec(10, nil, "first_name", "T", "notes", "N"), now: rec(20, nil, "first_name", "U", "notes", "N"), streamed: true,
			wantAt: map[string]time.Time{"notes": at(10)}, wantUnsettled: map[string]bool{"first_name": true}},
		{name: "a column the copy lacked",
			copy: rec(10, nil, "notes", "N"), now: rec(20, nil, "first_name", "U", "notes", "N"), streamed: true,
			wantAt: map[string]time.Time{"notes": at(10)}, wantUnsettled: map[string]bool{"first_name": true}},
		{name: "a value the copy held unsettled stays so",
			copy: rec(10, map[string]bool{"first_name": true}, "first_name", "U", "notes", "N"), now: rec(20, nil, "first_name", "U", "notes", "N"), streamed: true,
			wantAt: map[string]time.Time{"notes": at(10)}, wantUnsettled: map[string]bool{"first_name": true}},
		{name: "the row unchanged since the copy",
			copy: rec(10, nil, "first_name", "T"), now: rec(10, nil, "first_name", "T"), streamed: true},
		{name: "a poll's copy",
			copy: rec(10, nil, "first_name", "T", "notes", "N"), now: rec(20, nil, "first_name", "U", "notes", "N"),
			wantAt: map[string]time.Time{"notes": at(10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAgain(tc.copy, tc.now, tc.streamed)
			if !reflect.DeepEqual(got.FieldsAt, tc.wantAt) {
				t.Errorf("FieldsAt = %v, want %v", got.FieldsAt, tc.wantAt)
			}
			if !reflect.DeepEqual(got.Unsettled, tc.wantUnsettled) {
				t.Errorf("Unsettled = %v, want %v", got.Unsettled, tc.wantUnsettled)
			}
		})
	}
}

// fieldsAtSecond is second s of a fixed minute.
func fieldsAtSecond(s int) time.Time { return time.Date(2026, 11, 27, 12, 0, s, 0, time.UTC) }

// fieldsRecord is record 1 changed at second s, with the fields and
// values kv.
func fieldsRecord(s int, kv ...string) connector.Record {
	r := connector.Record{ID: "1", UpdatedAt: fieldsAtSecond(s), Fields: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		r.Fields[kv[i]] = kv[i+1]
	}
	return r
}

// TestUnsettledSince: a revisit's read of a streamed row leaves to the
// stream the changed values whose own time no stream read told.
func TestUnsettledSince(t *testing.T) {
	since := fieldsAtSecond(10)
	l := state.Link{Fields: map[string]string{"firstName": "Old", "lastName": "Old"}, SourceUpdatedAt: since}
	fields := map[string]string{"firstName": "Row", "lastName": "Old"}
	for _, tc := range []struct {
		name  string
		known map[string]state.RecordEdit
		want  []string
	}{
		{name: "no time known", want: []string{"firstName"}},
		{name: "the stream's own time", known: map[string]state.RecordEdit{"firstName": {Value: "Row", At: fieldsAtSecond(12), Since: since}}},
		{name: "only a whole-row read's bound", known: map[string]state.RecordEdit{"firstName": {Value: "Row", At: fieldsAtSecond(15), Since: since, Bound: true}},
			want: []string{"firstName"}},
		{name: "a time of another value", known: map[string]state.RecordEdit{"firstName": {Value: "Earlier", At: fieldsAtSecond(12), Since: since}},
			want: []string{"firstName"}},
		{name: "a time under an older link", known: map[string]state.RecordEdit{"firstName": {Value: "Row", At: fieldsAtSecond(8), Since: fieldsAtSecond(5)}},
			want: []string{"firstName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unsettledSince([]string{"firstName", "lastName"}, fields, l, tc.known); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("unsettledSince = %v, want %v", got, tc.want)
			}
		})
	}
}
