package state

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// sameLink compares links, times by instant.
func sameLink(a, b Link) bool {
	times := func(l Link) [4]time.Time {
		return [4]time.Time{l.WorkspaceWrittenAt, l.SourceWrittenAt, l.ContactUpdatedAt, l.SourceUpdatedAt}
	}
	ta, tb := times(a), times(b)
	for i := range ta {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	a.WorkspaceWrittenAt, a.SourceWrittenAt, a.ContactUpdatedAt, a.SourceUpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	b.WorkspaceWrittenAt, b.SourceWrittenAt, b.ContactUpdatedAt, b.SourceUpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

func TestLinkRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 30, 12, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		name string
		link Link
	}{
		{"minimal", Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}},
		{"full", Link{
			Connector: "crm", ExternalID: "42", ContactID: "CT123", RecordID: "row-42",
			Fields:        map[string]string{"firstName": "Ada", "emails.work": "ada@example.com", "custom.x": ""},
			ItemIDs:       map[string]string{"emails.work": "item-9"},
			WorkspaceHash: "wh", SourceHash: "sh",
			WorkspaceWrittenAt: at, SourceWrittenAt: at.Add(time.Second),
			ContactUpdatedAt: at.Add(2 * time.Second), SourceUpdatedAt: at.Add(-time.Hour),
			LastSeenRun: 7,
		}},
		{"unicode and separators in ids", Link{Connector: "pg", ExternalID: "ü/ä:1\x01", ContactID: "c/ü",
			Fields: map[string]string{"lastName": "Ñúñez"}}},
		{"time before 1970", Link{Connector: "crm", ExternalID: "old", ContactID: "c-old",
			SourceUpdatedAt: time.Date(1965, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	s, clk := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, s.Links.Put(tt.link))
			got, ok, err := s.Links.Get(tt.link.Connector, tt.link.ExternalID)
			if err != nil || !ok || !sameLink(got, tt.link) {
				t.Fatalf("Link = %+v, %v, %v; want %+v", got, ok, err, tt.link)
			}
			byContact, ok, err := s.Links.ByContact(tt.link.Connector, tt.link.ContactID)
			if err != nil || !ok || !sameLink(byContact, tt.link) {
				t.Fatalf("LinkByContact = %+v, %v, %v", byContact, ok, err)
			}
		})
	}
	s = reopen(t, s, clk)
	for _, tt := range tests {
		got, ok, err := s.Links.Get(tt.link.Connector, tt.link.ExternalID)
		if err != nil || !ok || !sameLink(got, tt.link) {
			t.Errorf("%s after reopen: %+v, %v, %v", tt.name, got, ok, err)
		}
	}
}

func TestLinkMissing(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))
	tests := []struct{ name, connector, ext, contact string }{
		{"unknown connector", "other", "e1", "c1"},
		{"unknown id", "crm", "e2", "c2"},
		{"empty connector", "", "e1", "c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok, err := s.Links.Get(tt.connector, tt.ext); ok || err != nil {
				t.Errorf("Link: ok %v err %v", ok, err)
			}
			if _, ok, err := s.Links.ByContact(tt.connector, tt.contact); ok || err != nil {
				t.Errorf("LinkByContact: ok %v err %v", ok, err)
			}
		})
	}
}

func TestPutLinkRefusesIncompleteLinks(t *testing.T) {
	tests := []struct {
		name string
		link Link
		msg  string
	}{
		{"no connector", Link{ExternalID: "e", ContactID: "c"}, "connector name is empty"},
		{"NUL in connector", Link{Connector: "a\x00b", ExternalID: "e", ContactID: "c"}, "NUL"},
		{"no external id", Link{Connector: "crm", ContactID: "c"}, "required"},
		{"no contact", Link{Connector: "crm", ExternalID: "e"}, "required"},
	}
	s, _ := openTest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Links.Put(tt.link)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("PutLink = %v, want an error saying %q", err, tt.msg)
			}
		})
	}
}

func TestLinkContactChangeMovesReverseIndex(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c2"}))
	if _, ok, _ := s.Links.ByContact("crm", "c1"); ok {
		t.Error("old contact still resolves to the link")
	}
	if l, ok, _ := s.Links.ByContact("crm", "c2"); !ok || l.ExternalID != "e1" {
		t.Errorf("new contact resolves to %+v, %v", l, ok)
	}
	// The old contact is free again.
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e2", ContactID: "c1"}))
	if n, _ := s.Links.Count("crm"); n != 2 {
		t.Errorf("CountLinks = %d, want 2", n)
	}
	assertIndexConsistent(t, s, "crm")
}

func TestPutLinkRefusesContactOfAnotherRecord(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))
	err := s.Links.Put(Link{Connector: "crm", ExternalID: "e2", ContactID: "c1"})
	if !errors.Is(err, ErrContactLinked) || !strings.Contains(err.Error(), "e1") {
		t.Fatalf("PutLink of a taken contact = %v, want ErrContactLinked naming e1", err)
	}
	if _, ok, _ := s.Links.Get("crm", "e2"); ok {
		t.Error("refused link was stored")
	}
	// Another connector may link the same contact.
	must(t, s.Links.Put(Link{Connector: "pg", ExternalID: "e2", ContactID: "c1"}))
	// After the first link is deleted, the contact can be linked again.
	must(t, s.Links.Delete("crm", "e1"))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e2", ContactID: "c1"}))
	if l, ok, _ := s.Links.ByContact("crm", "c1"); !ok || l.ExternalID != "e2" {
		t.Errorf("LinkByContact = %+v, %v", l, ok)
	}
	assertIndexConsistent(t, s, "crm")
}

func TestPutLinksIsAllOrNothing(t *testing.T) {
	s, _ := openTest(t)
	err := s.Links.PutAll([]Link{
		{Connector: "crm", ExternalID: "e1", ContactID: "c1"},
		{Connector: "crm", ExternalID: "e2", ContactID: "c1"}, // same contact: refused
		{Connector: "crm", ExternalID: "e3", ContactID: "c3"},
	})
	if !errors.Is(err, ErrContactLinked) {
		t.Fatalf("PutLinks = %v, want ErrContactLinked", err)
	}
	if n, _ := s.Links.Count("crm"); n != 0 {
		t.Fatalf("a failed batch left %d links", n)
	}
	var batch []Link
	for i := range 1000 {
		batch = append(batch, Link{Connector: "crm", ExternalID: fmt.Sprintf("e%04d", i), ContactID: fmt.Sprintf("c%04d", i)})
	}
	batch = append(batch, Link{Connector: "pg", ExternalID: "x", ContactID: "c0000"})
	must(t, s.Links.PutAll(batch))
	if n, _ := s.Links.Count("crm"); n != 1000 {
		t.Fatalf("CountLinks(crm) = %d", n)
	}
	if n, _ := s.Links.Count("pg"); n != 1 {
		t.Fatalf("CountLinks(pg) = %d", n)
	}
	assertIndexConsistent(t, s, "crm")
}

func TestDeleteLink(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1", LastSeenRun: 3}))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e2", ContactID: "c2"}))
	must(t, s.Links.Delete("crm", "e1"))
	if _, ok, _ := s.Links.Get("crm", "e1"); ok {
		t.Error("deleted link still there")
	}
	if _, ok, _ := s.Links.ByContact("crm", "c1"); ok {
		t.Error("reverse entry of the deleted link still there")
	}
	// Deleting again, or what never existed, is harmless.
	must(t, s.Links.Delete("crm", "e1"))
	must(t, s.Links.Delete("nobody", "e1"))
	// A new link under the same id does not inherit the old LastSeenRun.
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c9"}))
	if l, _, _ := s.Links.Get("crm", "e1"); l.LastSeenRun != 0 {
		t.Errorf("LastSeenRun = %d, want 0", l.LastSeenRun)
	}
	if n, _ := s.Links.Count("crm"); n != 2 {
		t.Errorf("CountLinks = %d, want 2", n)
	}
	assertIndexConsistent(t, s, "crm")
}

func TestDropLinks(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))
	must(t, s.Links.Put(Link{Connector: "pg", ExternalID: "e1", ContactID: "c1"}))
	must(t, s.Checkpoints.Set("crm", "", "cp"))
	must(t, s.Links.Drop("crm"))
	must(t, s.Links.Drop("crm"))
	if n, _ := s.Links.Count("crm"); n != 0 {
		t.Errorf("crm links after drop = %d", n)
	}
	if n, _ := s.Links.Count("pg"); n != 1 {
		t.Errorf("pg links after dropping crm = %d", n)
	}
	if cp, _ := s.Checkpoints.Get("crm", ""); cp != "cp" {
		t.Errorf("checkpoint after drop = %q", cp)
	}
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))
}

func TestForEachLink(t *testing.T) {
	s, _ := openTest(t)
	const n = 2*linkChunk + 37
	var ls []Link
	for i := n - 1; i >= 0; i-- { // written out of order
		ls = append(ls, Link{Connector: "crm", ExternalID: fmt.Sprintf("e%05d", i), ContactID: fmt.Sprintf("c%d", i)})
	}
	must(t, s.Links.PutAll(ls))
	must(t, s.Links.Put(Link{Connector: "other", ExternalID: "x", ContactID: "y"}))

	t.Run("in externalID order, each once", func(t *testing.T) {
		i := 0
		must(t, s.Links.ForEach("crm", func(l Link) error {
			if want := fmt.Sprintf("e%05d", i); l.ExternalID != want || l.Connector != "crm" {
				return fmt.Errorf("link %d is %s/%s, want %s", i, l.Connector, l.ExternalID, want)
			}
			i++
			return nil
		}))
		if i != n {
			t.Fatalf("visited %d links, want %d", i, n)
		}
	})
	t.Run("error stops the scan", func(t *testing.T) {
		stop := errors.New("enough")
		visited := 0
		err := s.Links.ForEach("crm", func(Link) error {
			if visited++; visited == 10 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || visited != 10 {
			t.Fatalf("err %v after %d links", err, visited)
		}
	})
	t.Run("fn may delete and write", func(t *testing.T) {
		visited := 0
		must(t, s.Links.ForEach("crm", func(l Link) error {
			visited++
			if err := s.Links.MarkSeen("crm", 5, []string{l.ExternalID}); err != nil {
				return err
			}
			return s.Links.Delete("crm", l.ExternalID)
		}))
		if visited != n {
			t.Fatalf("visited %d, want %d", visited, n)
		}
		if c, _ := s.Links.Count("crm"); c != 0 {
			t.Fatalf("%d links left", c)
		}
	})
	t.Run("unknown connector", func(t *testing.T) {
		must(t, s.Links.ForEach("nobody", func(Link) error { return errors.New("called") }))
	})
}

func TestMarkSeen(t *testing.T) {
	s, clk := openTest(t)
	must(t, s.Links.PutAll([]Link{
		{Connector: "crm", ExternalID: "a", ContactID: "1"},
		{Connector: "crm", ExternalID: "b", ContactID: "2", LastSeenRun: 1},
		{Connector: "crm", ExternalID: "c", ContactID: "3", LastSeenRun: 1},
	}))
	must(t, s.Links.MarkSeen("crm", 2, []string{"a", "b", "unknown", ""}))
	must(t, s.Links.MarkSeen("nobody", 2, []string{"a"}))
	s = reopen(t, s, clk)
	want := map[string]uint64{"a": 2, "b": 2, "c": 1}
	got := map[string]uint64{}
	must(t, s.Links.ForEach("crm", func(l Link) error { got[l.ExternalID] = l.LastSeenRun; return nil }))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LastSeenRun = %v, want %v", got, want)
	}
	if _, ok, _ := s.Links.Get("crm", "unknown"); ok {
		t.Error("MarkSeen created a link")
	}
	// PutLink replaces LastSeenRun with the link's.
	l, _, _ := s.Links.Get("crm", "a")
	l.WorkspaceHash = "new"
	must(t, s.Links.Put(l))
	if l2, _, _ := s.Links.Get("crm", "a"); l2.LastSeenRun != 2 || l2.WorkspaceHash != "new" {
		t.Errorf("after read-modify-write: %+v", l2)
	}
}

// assertIndexConsistent checks that the two link indexes agree.
func assertIndexConsistent(t *testing.T, s *Store, connector string) {
	t.Helper()
	n := 0
	must(t, s.Links.ForEach(connector, func(l Link) error {
		n++
		r, ok, err := s.Links.ByContact(connector, l.ContactID)
		if err != nil || !ok || r.ExternalID != l.ExternalID {
			return fmt.Errorf("contact %s resolves to %+v, %v, %v; want %s", l.ContactID, r, ok, err, l.ExternalID)
		}
		return nil
	}))
	if c, _ := s.Links.Count(connector); c != n {
		t.Fatalf("CountLinks = %d, scanned %d", c, n)
	}
	// No reverse entry outlives its link.
	must(t, s.db.View(func(tx *bolt.Tx) error {
		lb, ok := readLinks(tx, connector)
		if ok && (lb.contacts.Stats().KeyN != n || lb.links.Stats().KeyN != n) {
			return fmt.Errorf("%d reverse entries and %d values for %d links", lb.contacts.Stats().KeyN, lb.links.Stats().KeyN, n)
		}
		return nil
	}))
}

func TestLinkDigests(t *testing.T) {
	s, _ := openTest(t)
	hash := strings.Repeat("5e", 32)
	l := Link{Connector: "crm", ExternalID: "e1", ContactID: "c1", RecordID: "r1", WorkspaceHash: hash, SourceHash: "other",
		Fields: map[string]string{"firstName": "Ada"}, Fingerprint: [8]byte{1, 2, 3}}
	must(t, s.Links.Put(l))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e2", ContactID: "c2"}))
	got, err := s.Links.Digests("crm", []string{"missing", "e1", "e2"})
	must(t, err)
	want := []LinkDigest{{}, {Found: true, RecordID: "r1", WorkspaceHash: hash, Fingerprint: [8]byte{1, 2, 3}}, {Found: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("digests %+v, want %+v", got, want)
	}
	if got, err := s.Links.Digests("nobody", []string{"e1"}); err != nil || got[0].Found {
		t.Fatalf("digest of another connector: %+v, %v", got, err)
	}
	if back, _, _ := s.Links.Get("crm", "e1"); !sameLink(back, l) {
		t.Fatalf("link %+v, want %+v", back, l)
	}
}

func TestForEachLinkWhere(t *testing.T) {
	s, _ := openTest(t)
	var ls []Link
	for i := range 1200 { // more than one chunk
		ls = append(ls, Link{Connector: "crm", ExternalID: fmt.Sprintf("e%04d", i), ContactID: fmt.Sprintf("c%d", i)})
	}
	must(t, s.Links.PutAll(ls))
	for _, every := range []int{1, 7} {
		var got []string
		err := s.Links.ForEachWhere("crm", func(ext []byte) bool {
			var i int
			fmt.Sscanf(string(ext), "e%d", &i)
			return i%every == 0
		}, func(l Link) error {
			got = append(got, l.ExternalID)
			return nil
		})
		must(t, err)
		var want []string
		for i := 0; i < 1200; i += every {
			want = append(want, fmt.Sprintf("e%04d", i))
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("every %d: %d links, want %d", every, len(got), len(want))
		}
	}
	if err := s.Links.ForEachWhere("nobody", func([]byte) bool { return true }, func(Link) error { return errStop }); err != nil {
		t.Fatal(err)
	}
}
