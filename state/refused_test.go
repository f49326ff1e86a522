package state

import (
	"testing"
	"time"
)

// TestRefusedDeleteSurvivesReopenUntilCleared: a refused mass delete is
// kept per connector across a restart, replaced by a newer one, and gone
// once cleared (clearing none is no error).
func TestRefusedDeleteSurvivesReopenUntilCleared(t *testing.T) {
	s, clk := openTest(t)
	if _, ok, err := s.RefusedDeletes.Get("db"); err != nil || ok {
		t.Fatalf("fresh store: ok %v, %v; want none", ok, err)
	}
	at := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	if err := s.RefusedDeletes.Set("db", RefusedDelete{At: at, Kind: "resync", Reason: "would delete 39 of 39"}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, clk)
	got, ok, err := s.RefusedDeletes.Get("db")
	if err != nil || !ok || !got.At.Equal(at) || got.Kind != "resync" || got.Reason != "would delete 39 of 39" {
		t.Fatalf("after reopening: %+v, %v, %v", got, ok, err)
	}
	if _, ok, _ := s.RefusedDeletes.Get("crm"); ok {
		t.Error("another connector has the refusal")
	}
	if err := s.RefusedDeletes.Set("db", RefusedDelete{At: at.Add(time.Minute), Kind: "run", Reason: "newer"}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.RefusedDeletes.Get("db"); got.Reason != "newer" {
		t.Errorf("kept %+v, want the newer refusal", got)
	}
	for _, want := range []bool{true, false} {
		cleared, err := s.RefusedDeletes.Clear("db")
		if err != nil || cleared != want {
			t.Errorf("clear: %v, %v; want %v", cleared, err, want)
		}
	}
	if _, ok, _ := s.RefusedDeletes.Get("db"); ok {
		t.Error("the refusal stands after clearing")
	}
}
