package state

import (
	"testing"
	"time"
)

// TestActivityQueueSurvivesReopen: an enqueued event is there after a
// reopen, a redelivery of its id is a duplicate, and Ack removes it.
func TestActivityQueueSurvivesReopen(t *testing.T) {
	s, clk := openTest(t)
	acts := s.Activities
	seq, dup, err := acts.Enqueue(ActivityEvent{ID: "msg_1", Type: "call.completed", Body: []byte(`{}`)})
	must(t, err)
	if dup || seq == 0 {
		t.Fatalf("first enqueue: seq %d dup %v", seq, dup)
	}
	s = reopen(t, s, clk)
	acts = s.Activities
	if _, dup, err := acts.Enqueue(ActivityEvent{ID: "msg_1", Type: "call.completed"}); err != nil || !dup {
		t.Fatalf("redelivery: dup %v, %v", dup, err)
	}
	got, err := acts.Pending(0)
	must(t, err)
	if len(got) != 1 || got[0].Seq != seq || got[0].Type != "call.completed" {
		t.Fatalf("pending = %+v", got)
	}
	if n, err := acts.Attempted(seq); err != nil || n != 1 {
		t.Fatalf("attempted = %d, %v", n, err)
	}
	must(t, acts.Ack(seq))
	if n, err := acts.CountPending(); err != nil || n != 0 {
		t.Fatalf("pending after ack = %d, %v", n, err)
	}
}

// TestActivityIntentThenWritten: an intent is kept until the write is
// recorded, and counts follow creates and updates.
func TestActivityIntentThenWritten(t *testing.T) {
	s, _ := openTest(t)
	acts := s.Activities
	if _, ok, err := acts.Written("crm", "call:AC1:7"); err != nil || ok {
		t.Fatalf("written before anything: %v, %v", ok, err)
	}
	must(t, acts.Intend("crm", "call:AC1:7", "7"))
	w, ok, err := acts.Written("crm", "call:AC1:7")
	must(t, err)
	if !ok || !w.Intent || w.ActivityID != "" {
		t.Fatalf("after intent: %+v %v", w, ok)
	}
	must(t, acts.Wrote("crm", "call:AC1:7", WrittenActivity{ActivityID: "c9", Hash: "h1", RecordID: "7"}, true))
	must(t, acts.Intend("crm", "call:AC1:7", "7")) // kept: not an intent again
	w, _, err = acts.Written("crm", "call:AC1:7")
	must(t, err)
	if w.Intent || w.ActivityID != "c9" || w.Hash != "h1" {
		t.Fatalf("after write: %+v", w)
	}
	must(t, acts.Wrote("crm", "call:AC1:7", WrittenActivity{ActivityID: "c9", Hash: "h2", RecordID: "7"}, false))
	must(t, acts.Count("crm", 2, 1))
	c, err := acts.Counts("crm")
	must(t, err)
	if c != (ActivityCounts{Logged: 1, Updated: 1, Skipped: 2, Failed: 1}) {
		t.Fatalf("counts = %+v", c)
	}
}

// TestActivityItemsPruned: items last put before the limit go (with the
// texts they hold), later ones stay, and an item put again is kept by
// its new time.
func TestActivityItemsPruned(t *testing.T) {
	s, clk := openTest(t)
	acts := s.Activities
	must(t, acts.PutItem("message:AM1", []byte(`{"text":"old"}`)))
	must(t, acts.PutItem("call:AC1", []byte(`{"v":1}`)))
	clk.Advance(time.Hour)
	must(t, acts.PutItem("call:AC1", []byte(`{"v":2}`))) // put again: newer
	must(t, acts.PutItem("message:AM2", []byte(`{"text":"new"}`)))
	n, err := acts.PruneItems(clk.Now().Add(-time.Minute))
	must(t, err)
	if n != 1 {
		t.Fatalf("pruned %d items, want 1", n)
	}
	if _, ok, _ := acts.Item("message:AM1"); ok {
		t.Error("the old text is still kept")
	}
	for key, want := range map[string]string{"call:AC1": `{"v":2}`, "message:AM2": `{"text":"new"}`} {
		raw, ok, err := acts.Item(key)
		if err != nil || !ok || string(raw) != want {
			t.Errorf("item %s = %q, %v, %v; want %q", key, raw, ok, err, want)
		}
	}
}
