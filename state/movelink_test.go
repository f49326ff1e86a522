package state

import (
	"errors"
	"testing"
)

func TestMoveLinkKeepsTheContactsOneLink(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "merged", ContactID: "c1", Fields: map[string]string{"lastName": "A"}}))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "other", ContactID: "c2"}))
	must(t, s.Links.Move("merged", Link{Connector: "crm", ExternalID: "survivor", ContactID: "c1", RecordID: "survivor"}))
	if _, ok, _ := s.Links.Get("crm", "merged"); ok {
		t.Error("the old link is still there")
	}
	if l, ok, _ := s.Links.ByContact("crm", "c1"); !ok || l.ExternalID != "survivor" || l.RecordID != "survivor" {
		t.Errorf("the contact resolves to %+v, %v", l, ok)
	}
	// Moving onto a contact another record holds changes nothing.
	err := s.Links.Move("survivor", Link{Connector: "crm", ExternalID: "x", ContactID: "c2"})
	if !errors.Is(err, ErrContactLinked) {
		t.Fatalf("MoveLink onto a taken contact = %v, want ErrContactLinked", err)
	}
	if _, ok, _ := s.Links.Get("crm", "survivor"); !ok {
		t.Error("a refused move dropped the old link")
	}
	if n, _ := s.Links.Count("crm"); n != 2 {
		t.Errorf("CountLinks = %d, want 2", n)
	}
	assertIndexConsistent(t, s, "crm")
}
