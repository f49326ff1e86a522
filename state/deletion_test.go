package state

import (
	"testing"
	"time"
)

func TestContactDeletionLifecycle(t *testing.T) {
	s, _ := openTest(t)
	seen := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	d := ContactDeletion{Connector: "db", ContactID: "c1", ExternalID: "7", Fields: map[string]string{"firstName": "Ann"},
		Seen: seen, RecordDeletedAt: seen.Add(-time.Minute)}
	if err := s.Reverse.PutDeletion(d); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Reverse.DeletionOf("db", "c1")
	if err != nil || !ok || !got.Seen.Equal(seen) || got.ExternalID != "7" || got.Fields["firstName"] != "Ann" || got.At.IsZero() {
		t.Fatalf("DeletionOf = %+v, %v, %v; want the deletion put, with its time", got, ok, err)
	}
	if _, ok, err := s.Reverse.DeletionOf("other", "c1"); err != nil || ok {
		t.Fatalf("another connector's DeletionOf = %v, %v; want none", ok, err)
	}
	if err := s.Reverse.Commit(ReverseCommit{DropDeletions: []ContactDeletion{{Connector: "db", ContactID: "c1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Reverse.DeletionOf("db", "c1"); err != nil || ok {
		t.Fatalf("DeletionOf after the commit dropped it = %v, %v; want none", ok, err)
	}
	if err := s.Reverse.PutDeletion(d); err != nil {
		t.Fatal(err)
	}
	if err := s.Reverse.DropDeletion("db", "c1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Reverse.DeletionOf("db", "c1"); err != nil || ok {
		t.Fatalf("DeletionOf after DropDeletion = %v, %v; want none", ok, err)
	}
}
