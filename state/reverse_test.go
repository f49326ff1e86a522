package state

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestPendingCreateLifecycle(t *testing.T) {
	s, _ := openTest(t)
	if _, ok, err := s.Reverse.PendingOf("db", "C1"); err != nil || ok {
		t.Fatalf("fresh store: ok=%v err=%v, want none", ok, err)
	}
	p := PendingCreate{Connector: "db", ContactID: "C1", Fields: map[string]string{"name": "Ann"}}
	if err := s.Reverse.PutPending(p); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Reverse.PendingOf("db", "C1")
	if err != nil || !ok || got.RecordID != "" || got.Fields["name"] != "Ann" || got.CreatedAt.IsZero() {
		t.Fatalf("after put: %+v ok=%v err=%v", got, ok, err)
	}
	got.RecordID = "42"
	if err := s.Reverse.PutPending(got); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Reverse.PendingOf("other", "C1"); ok {
		t.Fatal("a pending create is visible under another connector")
	}
	all, err := s.Reverse.Pending("")
	if err != nil || len(all) != 1 || all[0].RecordID != "42" {
		t.Fatalf("PendingCreates = %+v, %v", all, err)
	}

	// The link and the clearing of the marker commit together.
	l := Link{Connector: "db", ExternalID: "42", ContactID: "C1", RecordID: "42", Fields: map[string]string{"firstName": "Ann"}}
	err = s.Reverse.PutLinks([]ReverseLink{{Link: l, Agreed: map[string]string{"custom.note": "x"}, ClearPending: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Reverse.PendingOf("db", "C1"); ok {
		t.Fatal("pending create survived PutReverseLinks with ClearPending")
	}
	if got, ok, _ := s.Links.ByContact("db", "C1"); !ok || got.RecordID != "42" {
		t.Fatalf("link by contact = %+v, %v", got, ok)
	}
	agreed, err := s.Reverse.Agreed("db", "C1")
	if err != nil || !reflect.DeepEqual(agreed, map[string]string{"custom.note": "x"}) {
		t.Fatalf("ReverseAgreed = %v, %v", agreed, err)
	}
	// nil Agreed keeps the stored values; an empty map removes them.
	if err := s.Reverse.PutLinks([]ReverseLink{{Link: l}}); err != nil {
		t.Fatal(err)
	}
	if agreed, _ := s.Reverse.Agreed("db", "C1"); agreed["custom.note"] != "x" {
		t.Fatalf("nil Agreed dropped the values: %v", agreed)
	}
	if err := s.Reverse.DeleteLink("db", "42"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Links.Get("db", "42"); ok {
		t.Fatal("link survived DeleteReverseLink")
	}
	if agreed, _ := s.Reverse.Agreed("db", "C1"); agreed != nil {
		t.Fatalf("values survived DeleteReverseLink: %v", agreed)
	}
	if err := s.Reverse.DeleteLink("db", "42"); err != nil {
		t.Fatalf("deleting a missing link: %v", err)
	}
}

func TestPutReverseLinksIsAllOrNothing(t *testing.T) {
	s, _ := openTest(t)
	if err := s.Reverse.PutPending(PendingCreate{Connector: "db", ContactID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.Put(Link{Connector: "db", ExternalID: "1", ContactID: "C9"}); err != nil {
		t.Fatal(err)
	}
	// The second link takes a contact another record holds: the whole
	// call fails and the first one's pending create stays.
	err := s.Reverse.PutLinks([]ReverseLink{
		{Link: Link{Connector: "db", ExternalID: "2", ContactID: "C1"}, ClearPending: true},
		{Link: Link{Connector: "db", ExternalID: "3", ContactID: "C9"}},
	})
	if err == nil {
		t.Fatal("PutReverseLinks linked a contact twice")
	}
	if _, ok, _ := s.Reverse.PendingOf("db", "C1"); !ok {
		t.Fatal("a failed PutReverseLinks cleared a pending create")
	}
	if _, ok, _ := s.Links.Get("db", "2"); ok {
		t.Fatal("a failed PutReverseLinks stored a link")
	}
}

func TestReverseBucketSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reverse.PutPending(PendingCreate{Connector: "db", ContactID: "C1", RecordID: "7"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	p, ok, err := ro.Reverse.PendingOf("db", "C1")
	if err != nil || !ok || p.RecordID != "7" {
		t.Fatalf("after reopen: %+v %v %v", p, ok, err)
	}
}

func TestCommitReverseAcksWithTheLinks(t *testing.T) {
	s, _ := openTest(t)
	seq1, _, _ := s.Inbox.Enqueue(InboxEvent{ID: "e1", ContactID: "C1"})
	seq2, _, _ := s.Inbox.Enqueue(InboxEvent{ID: "e2", ContactID: "C2"})
	if err := s.Links.Put(Link{Connector: "db", ExternalID: "9", ContactID: "C2"}); err != nil {
		t.Fatal(err)
	}
	err := s.Reverse.Commit(ReverseCommit{
		Links:     []ReverseLink{{Link: Link{Connector: "db", ExternalID: "1", ContactID: "C1", RecordID: "1"}}},
		Unlink:    []Link{{Connector: "db", ExternalID: "9"}},
		Conflicts: []Conflict{{Connector: "db", ExternalID: "1", ContactID: "C1", Policy: "newest-wins", Winner: "workspace"}},
		Ack:       []uint64{seq1, seq2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Inbox.Count(); n != 0 {
		t.Fatalf("%d events left in the inbox", n)
	}
	if _, ok, _ := s.Links.ByContact("db", "C1"); !ok {
		t.Fatal("link not stored")
	}
	if _, ok, _ := s.Links.ByContact("db", "C2"); ok {
		t.Fatal("unlinked link still there")
	}
	cs, err := s.Conflicts.List("db", 0)
	if err != nil || len(cs) != 1 || cs[0].At.IsZero() || cs[0].Winner != "workspace" {
		t.Fatalf("conflicts %+v, %v", cs, err)
	}

	// A failing commit acknowledges nothing.
	seq3, _, _ := s.Inbox.Enqueue(InboxEvent{ID: "e3", ContactID: "C3"})
	err = s.Reverse.Commit(ReverseCommit{
		Links: []ReverseLink{{Link: Link{Connector: "db", ExternalID: "2", ContactID: "C1"}}}, // C1 is linked to 1
		Ack:   []uint64{seq3},
	})
	if err == nil {
		t.Fatal("commit linking a contact twice succeeded")
	}
	if n, _ := s.Inbox.Count(); n != 1 {
		t.Fatalf("a failed commit acknowledged events: %d left, want 1", n)
	}
}

// TestRevisitsAreForgottenOnlyOnceRead: a revisit asked again after the
// forward direction listed it stays for its next pass.
func TestRevisitsAreForgottenOnlyOnceRead(t *testing.T) {
	s, clk := openTest(t)
	ask := func(ids ...string) {
		t.Helper()
		var c ReverseCommit
		for _, id := range ids {
			c.Revisit = append(c.Revisit, Revisit{Connector: "db", RecordID: id})
		}
		if err := s.Reverse.Commit(c); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		t.Helper()
		rs, err := s.Reverse.Revisits("db")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rv := range rs {
			out = append(out, rv.RecordID)
		}
		return out
	}
	ask("1", "2")
	read, err := s.Reverse.Revisits("db")
	if err != nil || len(read) != 2 {
		t.Fatalf("revisits %+v, %v", read, err)
	}
	clk.Advance(time.Second)
	ask("2") // asked again after the pass listed it
	if err := s.Reverse.DoneRevisits(read); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !reflect.DeepEqual(got, []string{"2"}) {
		t.Fatalf("revisits left %v, want the one asked again", got)
	}
	if got, _ := s.Reverse.Revisits("other"); len(got) != 0 {
		t.Fatalf("another connector's revisits %v", got)
	}
}

// TestEditTimesKeptBeforeTheLink: times kept of a record being made
// (Since zero) are bound to the link that clears its pending create, and
// win over a later time the link's own read gives (ReverseLink.Edits);
// those of a link's own version stay as they are; a pending create
// dropped without a link takes its times with it.
func TestEditTimesKeptBeforeTheLink(t *testing.T) {
	s, _ := openTest(t)
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	version := at.Add(time.Minute)
	for _, id := range []string{"C1", "C2"} {
		if err := s.Reverse.PutPending(PendingCreate{Connector: "db", ContactID: id, RecordID: "r" + id}); err != nil {
			t.Fatal(err)
		}
		if err := s.Reverse.PutRecordEdits("db", id, []RecordEdit{{Target: "firstName", Value: "Ann", At: at}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Reverse.PutRecordEdits("db", "C1", []RecordEdit{{Target: "lastName", Value: "Lee", At: at, Since: at}}); err != nil {
		t.Fatal(err)
	}
	l := Link{Connector: "db", ExternalID: "rC1", ContactID: "C1", RecordID: "rC1", SourceUpdatedAt: version}
	later := []RecordEdit{{Target: "firstName", Value: "Ann", At: version, Since: version, Bound: true},
		{Target: "company", Value: "Acme", At: version, Since: version, Bound: true}}
	if err := s.Reverse.Commit(ReverseCommit{Links: []ReverseLink{{Link: l, ClearPending: true, Edits: later}},
		DropPending: []PendingCreate{{Connector: "db", ContactID: "C2"}}}); err != nil {
		t.Fatal(err)
	}
	es, err := s.Reverse.RecordEdits("db", "C1")
	if err != nil {
		t.Fatal(err)
	}
	if e := es["firstName"]; !e.Holds("Ann", version) || !e.At.Equal(at) {
		t.Errorf("first name's time %v, want it bound to the link's version", e)
	}
	if e := es["company"]; !e.Holds("Acme", version) || !e.At.Equal(version) || !e.Bound {
		t.Errorf("company's time %v, want the one the link's read gave", e)
	}
	if e := es["lastName"]; !e.Since.Equal(at) {
		t.Errorf("last name's time %v, want its own version kept", e)
	}
	if es, err := s.Reverse.RecordEdits("db", "C2"); err != nil || es != nil {
		t.Errorf("times of a dropped pending create: %v, %v; want none", es, err)
	}
}
