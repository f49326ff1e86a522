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

// TestOldContactDeletionsAreForgotten: a deletion whose event never came
// is forgotten a week on, when another deletion is put.
func TestOldContactDeletionsAreForgotten(t *testing.T) {
	s, clk := openTest(t)
	put := func(id string) {
		t.Helper()
		if err := s.Reverse.PutDeletion(ContactDeletion{Connector: "db", ContactID: id, ExternalID: id}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(id string) bool {
		t.Helper()
		_, ok, err := s.Reverse.DeletionOf("db", id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	put("old")
	clk.Advance(deletionTTL - time.Hour)
	put("recent")
	if !has("old") {
		t.Fatal("a deletion of 6 days 23 hours ago was forgotten")
	}
	clk.Advance(2 * time.Hour)
	put("new")
	if has("old") {
		t.Error("a deletion of more than a week ago is still kept")
	}
	if !has("recent") || !has("new") {
		t.Errorf("recent deletions: %v, %v; want both kept", has("recent"), has("new"))
	}
}
