package state

import (
	"testing"
	"time"
)

// TestPendingEventsOf: the inbox's events of one contact, oldest first,
// as events are enqueued, acknowledged (one by one or with a reverse
// commit) and after the file is opened again (the index is rebuilt).
func TestPendingEventsOf(t *testing.T) {
	path := t.TempDir() + "/state.db"
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	enqueue := func(id, contact string) uint64 {
		t.Helper()
		seq, _, err := s.Inbox.Enqueue(InboxEvent{ID: id, Type: "contact.updated", ContactID: contact, ContactUpdatedAt: at, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	check := func(name, contact string, want ...string) {
		t.Helper()
		evs, err := s.Inbox.PendingOf(contact)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			got = append(got, e.ID)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: events of %s %v, want %v", name, contact, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: events of %s %v, want %v", name, contact, got, want)
			}
		}
	}
	a1 := enqueue("a1", "A")
	enqueue("b1", "B")
	check("before the first question", "A", "a1")
	a2 := enqueue("a2", "A")
	check("enqueued after the build", "A", "a1", "a2")
	if _, dup, _ := s.Inbox.Enqueue(InboxEvent{ID: "a1", ContactID: "A"}); !dup {
		t.Fatal("a1 not a duplicate")
	}
	check("a duplicate", "A", "a1", "a2")
	if err := s.Inbox.Ack(a1); err != nil {
		t.Fatal(err)
	}
	check("acknowledged", "A", "a2")
	if err := s.Reverse.Commit(ReverseCommit{Ack: []uint64{a2}}); err != nil {
		t.Fatal(err)
	}
	check("committed", "A")
	check("other contact", "B", "b1")
	enqueue("a3", "A")
	s.Close()
	if s, err = Open(path, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check("reopened", "A", "a3")
	check("reopened", "B", "b1")
	check("none", "C")
}
