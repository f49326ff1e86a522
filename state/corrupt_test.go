package state

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// assertCorrupt checks that err is ErrCorrupt, names the file and says how
// to recover.
func assertCorrupt(t *testing.T, err error, path, cause string) {
	t.Helper()
	var ce *CorruptError
	switch {
	case !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce):
		t.Fatalf("err = %v, want ErrCorrupt", err)
	case ce.Path != path || !strings.Contains(err.Error(), path):
		t.Fatalf("err = %v, does not name %s", err, path)
	case !strings.Contains(err.Error(), "syncd state backup") || !strings.Contains(err.Error(), "syncd resync"):
		t.Fatalf("err = %v, gives no recovery hint", err)
	case !strings.Contains(err.Error(), cause):
		t.Fatalf("err = %v, does not say %q", err, cause)
	}
}

func TestCorruptLinkValue(t *testing.T) {
	s, _ := openTest(t)
	for i := range 3 {
		must(t, s.Links.Put(Link{Connector: "db", ExternalID: fmt.Sprint(i), ContactID: fmt.Sprint("c", i)}))
	}
	must(t, s.db.Update(func(tx *bolt.Tx) error {
		// The link value of db/1 damaged, its externalID still readable.
		lb, _ := readLinks(tx, "db")
		seq, _ := lb.lookup([]byte("1"))
		return lb.links.Put(u64(seq), append(appendString(nil, "1"), linkFormat1, 0xff))
	}))
	tests := []struct {
		name string
		op   func() error
	}{
		{"Link", func() error { _, _, err := s.Links.Get("db", "1"); return err }},
		{"LinkByContact", func() error { _, _, err := s.Links.ByContact("db", "c1"); return err }},
		{"ForEachLink", func() error { return s.Links.ForEach("db", func(Link) error { return nil }) }},
		{"DeleteLink", func() error { return s.Links.Delete("db", "1") }},
		{"PutLink over it", func() error { return s.Links.Put(Link{Connector: "db", ExternalID: "1", ContactID: "c9"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertCorrupt(t, tt.op(), s.Path(), "decode link db/1: malformed link value")
		})
	}
	// The undamaged links still read, and writes elsewhere still work.
	if l, ok, err := s.Links.Get("db", "2"); err != nil || !ok || l.ContactID != "c2" {
		t.Fatalf("Link(db/2) = %+v, %v, %v", l, ok, err)
	}
	must(t, s.Links.Put(Link{Connector: "db", ExternalID: "3", ContactID: "c3"}))
}

func TestPanicInReadTransaction(t *testing.T) {
	s, _ := openTest(t)
	err := s.view("read", func(*bolt.Tx) error { panic("bad page") })
	assertCorrupt(t, err, s.Path(), "bbolt panicked: bad page")
	// A read panic leaves the store usable.
	must(t, s.Links.Put(Link{Connector: "db", ExternalID: "1", ContactID: "c1"}))
	if _, ok, err := s.Links.Get("db", "1"); err != nil || !ok {
		t.Fatalf("Link after a read panic = %v, %v", ok, err)
	}
}

func TestPanicInWriteTransaction(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "db", ExternalID: "1", ContactID: "c1"}))
	err := s.update("write", func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketLinks).Bucket([]byte("db")).Bucket(subIDs).Put([]byte("2"), []byte{1}); err != nil {
			return err
		}
		panic("bad branch")
	})
	assertCorrupt(t, err, s.Path(), "bbolt panicked: bad branch")
	// Every later transaction fails at once, reads and writes.
	done := make(chan [2]error, 1)
	go func() {
		_, _, rerr := s.Links.Get("db", "1")
		done <- [2]error{rerr, s.Links.Put(Link{Connector: "db", ExternalID: "3", ContactID: "c3"})}
	}()
	select {
	case errs := <-done:
		for _, err := range errs {
			assertCorrupt(t, err, s.Path(), "bbolt panicked: bad branch")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a transaction after the panic blocked")
	}
	// The panicked transaction was rolled back: the file closes and
	// reopens without the half-written link.
	must(t, s.Close())
	s2, err := Open(s.Path(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, ok, err := s2.Links.Get("db", "2"); err != nil || ok {
		t.Fatalf("Link(db/2) after rollback = %v, %v; want none", ok, err)
	}
	if _, ok, err := s2.Links.Get("db", "1"); err != nil || !ok {
		t.Fatalf("Link(db/1) after rollback = %v, %v", ok, err)
	}
}

// TestFaultReadingMappedFile cuts the file short under an open store: the
// first read of a page past the end faults (SIGBUS), which must come back
// as ErrCorrupt rather than kill the process.
func TestFaultReadingMappedFile(t *testing.T) {
	s, _ := openTest(t)
	ls := make([]Link, 2000)
	for i := range ls {
		ls[i] = Link{Connector: "db", ExternalID: fmt.Sprintf("%05d", i), ContactID: fmt.Sprint("c", i),
			Fields: map[string]string{"note": strings.Repeat("x", 100)}}
	}
	must(t, s.Links.PutAll(ls))
	if err := os.Truncate(s.Path(), 2*int64(os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	err := s.Links.ForEach("db", func(Link) error { return nil })
	assertCorrupt(t, err, s.Path(), "bbolt panicked")
}

func TestCorruptJSONValue(t *testing.T) {
	tests := []struct {
		name, raw, cause string
	}{
		{"syntax", `{"connector":`, "decode run"},
		{"bad time", `{"connector":"db","startedAt":"\u00a0026-11-22T04:20:13Z"}`, "parsing time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			r, err := s.Runs.Start("db", "run")
			must(t, err)
			must(t, s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketRuns).Put(u64(r.ID), []byte(tt.raw))
			}))
			_, err = s.Runs.List("db", 0)
			assertCorrupt(t, err, s.Path(), tt.cause)
			assertCorrupt(t, s.Runs.Finish(r), s.Path(), "undecodable value")
		})
	}
}

// TestLinkIndexDisagreesWithLink damages a link's externalID, its entry
// in the externalID index, or both (as bytes flipped in the crash suite
// did): syncd refused the file with "contact already linked to another
// record", or stored a second link for the record. Each is a damaged
// file, named with how to recover.
func TestLinkIndexDisagreesWithLink(t *testing.T) {
	tests := []struct {
		name                   string
		renameLink, breakIndex bool
		cause                  string
	}{
		{"link holds another externalID", true, false, `externalID "?2"`},
		{"index entry of the externalID damaged", false, true, `its externalID "2" is not indexed to it`},
		{"both", true, true, `its externalID "?2" is not indexed to it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			for i := range 3 {
				must(t, s.Links.Put(Link{Connector: "db", ExternalID: fmt.Sprint(i), ContactID: fmt.Sprint("c", i)}))
			}
			must(t, s.db.Update(func(tx *bolt.Tx) error {
				lb, _ := readLinks(tx, "db")
				seq, _ := lb.lookup([]byte("2"))
				if tt.renameLink {
					if err := lb.links.Put(u64(seq), storedValue(Link{Connector: "db", ExternalID: "?2", ContactID: "c2"})); err != nil {
						return err
					}
				}
				if tt.breakIndex {
					return lb.ids.Put([]byte("2"), []byte{0})
				}
				return nil
			}))
			ops := []struct {
				name string
				op   func() error
			}{
				{"PutLink", func() error { return s.Links.Put(Link{Connector: "db", ExternalID: "2", ContactID: "c2"}) }},
				{"LinkByContact", func() error { _, _, err := s.Links.ByContact("db", "c2"); return err }},
			}
			if !tt.breakIndex {
				ops = append(ops, struct {
					name string
					op   func() error
				}{"Link", func() error { _, _, err := s.Links.Get("db", "2"); return err }})
			}
			for _, o := range ops {
				t.Run(o.name, func(t *testing.T) { assertCorrupt(t, o.op(), s.Path(), tt.cause) })
			}
			// The other links still read.
			if l, ok, err := s.Links.ByContact("db", "c1"); err != nil || !ok || l.ExternalID != "1" {
				t.Fatalf("ByContact(c1) = %+v, %v, %v", l, ok, err)
			}
		})
	}
}
