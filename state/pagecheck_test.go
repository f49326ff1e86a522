package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestDamagedPagesRefused damages a state file's page structure the ways
// byte flips did in the crash suite (test/crash TestDamagedStateFile) and
// checks that Open refuses the file at once, naming it and how to
// recover. Handed to bbolt, the first two files make its cursors descend
// forever (the process hangs, its memory growing) and the last two make
// it hand out pages still in use or read far past the freelist.
func TestDamagedPagesRefused(t *testing.T) {
	orig := damagedPagesFixture(t)
	ne := binary.NativeEndian
	tests := []struct {
		name, cause string
		damage      func(t *testing.T, b []byte, f fixtureFile)
	}{
		{"empty inline bucket's page marked as a branch page", "inline bucket",
			func(t *testing.T, b []byte, f fixtureFile) {
				v := f.rootValue(t, b, bucketHeld)
				ne.PutUint16(v[bucketHeaderSize+8:], branchPageFlag)
			}},
		{"branch page whose first child is itself", "already reached",
			func(t *testing.T, b []byte, f fixtureFile) {
				p := b[f.branch*f.pageSize:]
				ne.PutUint64(p[pageHeaderSize+8:], f.branch)
			}},
		{"freelist listing the root bucket's page", "freelist says is free",
			func(t *testing.T, b []byte, f fixtureFile) {
				p := b[f.meta.freelist*f.pageSize:]
				ne.PutUint16(p[10:], 1)
				ne.PutUint64(p[pageHeaderSize:], f.meta.root)
			}},
		{"freelist claiming millions of overflow pages", "overflow pages",
			func(t *testing.T, b []byte, f fixtureFile) {
				ne.PutUint32(b[f.meta.freelist*f.pageSize+12:], 11403264)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := append([]byte(nil), orig.data...)
			tt.damage(t, b, orig)
			path := filepath.Join(t.TempDir(), "state.db")
			must(t, os.WriteFile(path, b, 0o600))
			done := make(chan error, 1)
			go func() { done <- openAndReadAll(path) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("opening and reading the damaged file still running after 10s")
			}
			switch {
			case !errors.Is(err, ErrInvalidFile):
				t.Fatalf("err = %v, want ErrInvalidFile", err)
			case !strings.Contains(err.Error(), path):
				t.Fatalf("err = %v, does not name %s", err, path)
			case !strings.Contains(err.Error(), "syncd state backup") || !strings.Contains(err.Error(), "syncd resync"):
				t.Fatalf("err = %v, gives no recovery hint", err)
			case !strings.Contains(err.Error(), tt.cause):
				t.Fatalf("err = %v, does not say %q", err, tt.cause)
			}
		})
	}
	// The undamaged file opens and reads.
	path := filepath.Join(t.TempDir(), "state.db")
	must(t, os.WriteFile(path, orig.data, 0o600))
	must(t, openAndReadAll(path))
}

// openAndReadAll opens the file at path, reads every bucket, writes a
// link and closes it.
func openAndReadAll(path string) error {
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		return err
	}
	defer s.Close()
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(b.Bucket(k))
			}
			return nil
		})
	}
	if err := s.view("read all", func(tx *bolt.Tx) error {
		return tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	}); err != nil {
		return err
	}
	return s.Links.Put(Link{Connector: "db", ExternalID: "new", ContactID: "c-new"})
}

// fixtureFile is a state file holding enough links for branch pages, and
// where its structures are.
type fixtureFile struct {
	data     []byte
	pageSize uint64
	meta     metaPage // the newer meta page
	branch   uint64   // the root page of a bucket, a branch page
}

// rootValue returns the value of the root bucket's entry name, a bucket
// stored inline.
func (f fixtureFile) rootValue(t *testing.T, b []byte, name []byte) []byte {
	t.Helper()
	ne := binary.NativeEndian
	p := b[f.meta.root*f.pageSize:]
	if ne.Uint16(p[8:]) != leafPageFlag {
		t.Fatalf("root bucket page %d is not a leaf page", f.meta.root)
	}
	for i := range uint64(ne.Uint16(p[10:])) {
		e := p[pageHeaderSize+i*elementSize:]
		pos, ksize, vsize := uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
		k := e[pos : pos+ksize]
		if bytes.Equal(k, name) {
			v := e[pos+ksize : pos+ksize+vsize]
			if ne.Uint64(v) != 0 {
				t.Fatalf("bucket %s is not inline", name)
			}
			return v
		}
	}
	t.Fatalf("no bucket %s in the root bucket", name)
	return nil
}

// damagedPagesFixture builds the file of TestDamagedPagesRefused.
func damagedPagesFixture(t *testing.T) fixtureFile {
	t.Helper()
	s, _ := openTest(t)
	ls := make([]Link, 2000)
	for i := range ls {
		ls[i] = Link{Connector: "db", ExternalID: fmt.Sprint(i), ContactID: fmt.Sprintf("contact-%08d", i),
			Fields: map[string]string{"firstName": fmt.Sprint("First", i), "emails.work": fmt.Sprintf("u%d@example.com", i)}}
	}
	must(t, s.Links.PutAll(ls))
	var f fixtureFile
	must(t, s.db.View(func(tx *bolt.Tx) error {
		f.pageSize = uint64(tx.DB().Info().PageSize)
		c := tx.Bucket(bucketLinks).Bucket([]byte("db"))
		for _, sub := range [][]byte{subLinks, subIDs, subContacts} {
			id := uint64(c.Bucket(sub).Root())
			if info, err := tx.Page(int(id)); err == nil && info != nil && info.Type == "branch" {
				f.branch = id
				return nil
			}
		}
		return errors.New("no link bucket with a branch root page")
	}))
	must(t, s.Close())
	var err error
	f.data, err = os.ReadFile(s.Path())
	must(t, err)
	m0, err0 := readMeta(bytes.NewReader(f.data), 0)
	m1, err1 := readMeta(bytes.NewReader(f.data), int64(f.pageSize))
	must(t, errors.Join(err0, err1))
	f.meta = m0
	if m1.txid > m0.txid {
		f.meta = m1
	}
	if f.meta.freelist == noFreelist {
		t.Fatal("the fixture has no freelist page")
	}
	return f
}
