package state

import (
	"testing"
	"time"
)

// A record's warnings are replaced as a whole; only new or changed ones
// come back as fresh (to be reported once per change of the value).
func TestSetFieldWarningsReportsOncePerValue(t *testing.T) {
	s, clk := openTest(t)
	na := FieldWarning{Field: "phoneNumbers.mobile", From: "mobile", Value: "n/a", Reason: "not a phone number", RecordID: "101"}
	local := FieldWarning{Field: "phoneNumbers.mobile", From: "mobile", Value: "555-0100", Reason: "only possible as a local number"}
	office := FieldWarning{Field: "phoneNumbers.office", From: "office", Value: "x", Reason: "not a phone number"}
	steps := []struct {
		name      string
		key       string
		set       []FieldWarning
		wantFresh []string // values
		wantAll   int      // every connector's warnings after the step
		wantSince time.Duration
	}{
		{name: "first meeting", key: "e1", set: []FieldWarning{na}, wantFresh: []string{"n/a"}, wantAll: 1},
		{name: "same value next pass", key: "e1", set: []FieldWarning{na}, wantAll: 1},
		{name: "value changed", key: "e1", set: []FieldWarning{local}, wantFresh: []string{"555-0100"}, wantAll: 1},
		{name: "a second field", key: "e1", set: []FieldWarning{local, office}, wantFresh: []string{"x"}, wantAll: 2},
		{name: "another record", key: "e2", set: []FieldWarning{na}, wantFresh: []string{"n/a"}, wantAll: 3},
		{name: "record maps whole again", key: "e1", set: nil, wantAll: 1},
		{name: "back to the old value is new again", key: "e1", set: []FieldWarning{na}, wantFresh: []string{"n/a"}, wantAll: 2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Advance(time.Minute)
			fresh, err := s.FieldWarnings.Set("crm", st.key, st.set)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range fresh {
				got = append(got, w.Value)
				if w.Connector != "crm" || w.Key != st.key || !w.CreatedAt.Equal(clk.Now()) {
					t.Errorf("fresh warning %+v: want connector crm, key %s, created now", w, st.key)
				}
			}
			if len(got) != len(st.wantFresh) || (len(got) > 0 && got[0] != st.wantFresh[0]) {
				t.Fatalf("fresh = %q, want %q", got, st.wantFresh)
			}
			if n, err := s.FieldWarnings.Count(""); err != nil || n != st.wantAll {
				t.Fatalf("CountFieldWarnings = %d, %v; want %d", n, err, st.wantAll)
			}
		})
	}
	if _, err := s.FieldWarnings.Set("pg", "e1", []FieldWarning{office}); err != nil {
		t.Fatal(err)
	}
	crm, err := s.FieldWarnings.List("crm")
	if err != nil || len(crm) != 2 || crm[0].Key != "e1" || crm[1].Key != "e2" || crm[1].RecordID != "101" {
		t.Fatalf("FieldWarnings(crm) = %+v, %v; want e1's and e2's", crm, err)
	}
	if n, _ := s.FieldWarnings.Count("pg"); n != 1 {
		t.Fatalf("CountFieldWarnings(pg) = %d, want 1", n)
	}
	// e2's warning kept the time it was first met.
	if want := time.Date(2026, 3, 30, 12, 5, 0, 0, time.UTC); !crm[1].CreatedAt.Equal(want) {
		t.Fatalf("e2 created %v, want %v", crm[1].CreatedAt, want)
	}
}

// A file that never had a warning lists none, read-only too.
func TestFieldWarningsOfAFileWithoutAny(t *testing.T) {
	s, _ := openTest(t)
	ws, err := s.FieldWarnings.List("")
	n, cerr := s.FieldWarnings.Count("crm")
	if err != nil || cerr != nil || len(ws) != 0 || n != 0 {
		t.Fatalf("FieldWarnings = %v, %v; Count = %d, %v; want none", ws, err, n, cerr)
	}
	if _, err := s.FieldWarnings.Set("", "e1", nil); err == nil {
		t.Fatal("SetFieldWarnings with no connector: want an error")
	}
}
