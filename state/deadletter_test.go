package state

import (
	"errors"
	"testing"
	"time"
)

func TestAddDeadLetterUpserts(t *testing.T) {
	s, clk := openTest(t)
	start := clk.Now()
	steps := []struct {
		name         string
		letter       DeadLetter
		advance      time.Duration
		wantID       uint64
		wantAttempts int
		wantReason   string
	}{
		{"new letter", DeadLetter{Connector: "crm", Operation: "create", Key: "e1", Reason: "422 invalid phone", Payload: []byte("p1")}, 0, 1, 1, "422 invalid phone"},
		{"same key again", DeadLetter{Connector: "crm", Operation: "create", Key: "e1", Reason: "422 invalid email", Payload: []byte("p2")}, time.Minute, 1, 2, "422 invalid email"},
		{"after three retries", DeadLetter{Connector: "crm", Operation: "create", Key: "e1", Reason: "503", Attempts: 3}, time.Minute, 1, 5, "503"},
		{"other operation", DeadLetter{Connector: "crm", Operation: "update", Key: "e1", Reason: "409"}, 0, 2, 1, "409"},
		{"other connector", DeadLetter{Connector: "pg", Operation: "create", Key: "e1", Reason: "x"}, 0, 3, 1, "x"},
		{"new with attempts", DeadLetter{Connector: "crm", Operation: "writeback", Key: "CT1", Reason: "timeout", Attempts: 4}, 0, 4, 4, "timeout"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Advance(st.advance)
			id, err := s.DeadLetters.Add(st.letter)
			if err != nil || id != st.wantID {
				t.Fatalf("AddDeadLetter = %d, %v; want id %d", id, err, st.wantID)
			}
			d, err := s.DeadLetters.Get(id)
			must(t, err)
			if d.Attempts != st.wantAttempts || d.Reason != st.wantReason || d.Key != st.letter.Key ||
				!d.UpdatedAt.Equal(clk.Now()) {
				t.Fatalf("letter = %+v", d)
			}
		})
	}
	d, _ := s.DeadLetters.Get(1)
	if !d.CreatedAt.Equal(start) || string(d.Payload) != "" {
		// The last upsert carried no payload: the payload is replaced.
		t.Errorf("letter 1: created %v (want %v), payload %q", d.CreatedAt, start, d.Payload)
	}
	if n, _ := s.DeadLetters.Count(""); n != 4 {
		t.Errorf("CountDeadLetters(all) = %d, want 4 (no duplicates)", n)
	}
}

func TestDeadLetterListingAndRemoval(t *testing.T) {
	s, clk := openTest(t)
	add := func(c, op, key string) uint64 {
		id, err := s.DeadLetters.Add(DeadLetter{Connector: c, Operation: op, Key: key, Reason: "r",
			NextTry: clk.Now().Add(time.Hour)})
		must(t, err)
		return id
	}
	a := add("crm", "create", "e2")
	b := add("crm2", "create", "e1") // a connector whose name extends another's
	c := add("crm", "create", "e1")
	d := add("pg", "delete", "e9")

	tests := []struct {
		connector string
		want      []uint64
	}{
		{"", []uint64{a, b, c, d}},
		{"crm", []uint64{a, c}},
		{"crm2", []uint64{b}},
		{"pg", []uint64{d}},
		{"none", nil},
	}
	for _, tt := range tests {
		t.Run("list "+tt.connector, func(t *testing.T) {
			got, err := s.DeadLetters.List(tt.connector)
			must(t, err)
			var ids []uint64
			for _, l := range got {
				ids = append(ids, l.ID)
				if !l.NextTry.Equal(clk.Now().Add(time.Hour)) {
					t.Errorf("NextTry = %v", l.NextTry)
				}
			}
			if len(ids) != len(tt.want) {
				t.Fatalf("ids = %v, want %v", ids, tt.want)
			}
			for i := range ids {
				if ids[i] != tt.want[i] {
					t.Fatalf("ids = %v, want %v", ids, tt.want)
				}
			}
			if n, _ := s.DeadLetters.Count(tt.connector); n != len(tt.want) {
				t.Errorf("CountDeadLetters = %d", n)
			}
		})
	}

	must(t, s.DeadLetters.Clear("crm", "create", "e1"))
	must(t, s.DeadLetters.Clear("crm", "create", "e1")) // nothing left: no error
	if _, err := s.DeadLetters.Get(c); !errors.Is(err, ErrNotFound) {
		t.Errorf("cleared letter: %v", err)
	}
	must(t, s.DeadLetters.Delete(a))
	if err := s.DeadLetters.Delete(a); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	if n, _ := s.DeadLetters.Count("crm"); n != 0 {
		t.Errorf("crm letters left: %d", n)
	}
	// The key is free again: a new failure makes a new letter.
	if id := add("crm", "create", "e2"); id == a {
		t.Errorf("reused id %d", id)
	}
	if l, _ := s.DeadLetters.List("crm"); len(l) != 1 || l[0].Attempts != 1 {
		t.Errorf("after re-adding: %+v", l)
	}

	s = reopen(t, s, clk)
	if n, _ := s.DeadLetters.Count(""); n != 3 {
		t.Errorf("after reopen: %d letters, want 3", n)
	}
}

func TestAddDeadLetterRefusesBadNames(t *testing.T) {
	s, _ := openTest(t)
	for _, d := range []DeadLetter{
		{Operation: "create", Key: "k"},
		{Connector: "crm", Key: "k"},
		{Connector: "c\x00rm", Operation: "create", Key: "k"},
	} {
		if _, err := s.DeadLetters.Add(d); err == nil {
			t.Errorf("AddDeadLetter(%+v) succeeded", d)
		}
	}
}
