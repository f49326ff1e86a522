package state

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestHeldMatches(t *testing.T) {
	s, clk := openTest(t)
	must(t, s.Matches.PutHeld("crm", "e2", []byte(`{"candidates":["c1","c2"]}`)))
	must(t, s.Matches.PutHeld("crm", "e1", nil))
	must(t, s.Matches.PutHeld("crm", "e2", []byte(`{"candidates":["c1","c3"]}`))) // replaces
	must(t, s.Matches.PutHeld("pg", "e1", []byte("x")))
	if err := s.Matches.PutHeld("crm", "", nil); err == nil {
		t.Error("held without externalID accepted")
	}
	s = reopen(t, s, clk)

	got, err := s.Matches.Held("crm")
	must(t, err)
	want := map[string][]byte{"e1": {}, "e2": []byte(`{"candidates":["c1","c3"]}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Held = %q, want %q", got, want)
	}
	if n, _ := s.Matches.CountHeld("crm"); n != 2 {
		t.Errorf("CountHeld = %d", n)
	}
	must(t, s.Matches.DeleteHeld("crm", "e1"))
	must(t, s.Matches.DeleteHeld("crm", "e1"))
	must(t, s.Matches.DeleteHeld("none", "e1"))
	if got, _ := s.Matches.Held("crm"); len(got) != 1 {
		t.Errorf("after delete: %q", got)
	}
	if got, _ := s.Matches.Held("none"); len(got) != 0 {
		t.Errorf("Held(none) = %q", got)
	}
}

func TestForEachHeldStreamsInOrder(t *testing.T) {
	s, _ := openTest(t)
	const n = linkChunk + 10
	for i := n - 1; i >= 0; i-- {
		must(t, s.Matches.PutHeld("crm", fmt.Sprintf("e%04d", i), []byte(fmt.Sprint(i))))
	}
	i := 0
	must(t, s.Matches.ForEachHeld("crm", func(id string, payload []byte) error {
		if id != fmt.Sprintf("e%04d", i) || string(payload) != fmt.Sprint(i) {
			return fmt.Errorf("entry %d = %s %s", i, id, payload)
		}
		i++
		return s.Matches.DeleteHeld("crm", id) // writing from fn is allowed
	}))
	if i != n {
		t.Fatalf("visited %d, want %d", i, n)
	}
	stop := errors.New("stop")
	must(t, s.Matches.PutHeld("crm", "a", nil))
	if err := s.Matches.ForEachHeld("crm", func(string, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("error from fn: %v", err)
	}
}

func TestMatchIndex(t *testing.T) {
	s, clk := openTest(t)
	must(t, s.Matches.PutIndex("crm", []IndexEntry{
		{Key: "phone:+15555550100", ContactID: "c1"},
		{Key: "email:ada@example.com", ContactID: "c1"},
		{Key: "phone:+15555550100", ContactID: "c2"}, // shared number: ambiguous
		{Key: "phone:+155555501", ContactID: "c9"},   // a prefix of another key
		{Key: "email:bob@example.com", ContactID: "c3"},
		{Key: "email:bob@example.com", ContactID: "c3"}, // twice: kept once
	}))
	must(t, s.Matches.PutIndex("pg", []IndexEntry{{Key: "email:ada@example.com", ContactID: "c7"}}))
	s = reopen(t, s, clk)

	tests := []struct {
		connector, key string
		want           []string
	}{
		{"crm", "phone:+15555550100", []string{"c1", "c2"}},
		{"crm", "phone:+155555501", []string{"c9"}},
		{"crm", "email:ada@example.com", []string{"c1"}},
		{"crm", "email:bob@example.com", []string{"c3"}},
		{"crm", "email:nobody@example.com", nil},
		{"pg", "email:ada@example.com", []string{"c7"}},
		{"none", "email:ada@example.com", nil},
	}
	for _, tt := range tests {
		t.Run(tt.connector+" "+tt.key, func(t *testing.T) {
			got, err := s.Matches.Lookup(tt.connector, tt.key)
			must(t, err)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("LookupIndex = %v, want %v", got, tt.want)
			}
		})
	}

	must(t, s.Matches.DeleteIndex("crm", []IndexEntry{{Key: "phone:+15555550100", ContactID: "c2"}, {Key: "x", ContactID: "y"}}))
	if got, _ := s.Matches.Lookup("crm", "phone:+15555550100"); !reflect.DeepEqual(got, []string{"c1"}) {
		t.Errorf("after delete: %v", got)
	}
	must(t, s.Matches.ClearIndex("crm"))
	must(t, s.Matches.ClearIndex("crm"))
	if got, _ := s.Matches.Lookup("crm", "email:ada@example.com"); got != nil {
		t.Errorf("after clear: %v", got)
	}
	if got, _ := s.Matches.Lookup("pg", "email:ada@example.com"); len(got) != 1 {
		t.Errorf("clearing crm touched pg: %v", got)
	}
	for _, bad := range []IndexEntry{{Key: "", ContactID: "c"}, {Key: "k", ContactID: ""}, {Key: "a\x00b", ContactID: "c"}} {
		if err := s.Matches.PutIndex("crm", []IndexEntry{bad}); err == nil {
			t.Errorf("entry %q accepted", bad)
		}
	}
}
