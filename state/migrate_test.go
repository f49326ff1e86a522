package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// writeRaw builds a file with bbolt alone, as an older (or newer) syncd
// would have left it.
func writeRaw(t *testing.T, fn func(tx *bolt.Tx) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(fn))
	must(t, db.Close())
	return path
}

// readRaw reads a file with bbolt alone.
func readRaw(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	must(t, err)
	defer db.Close()
	must(t, db.View(fn))
}

// v1File writes a version 1 file by hand: its buckets, a checkpoint and a
// link in the version 1 encoding.
func v1File(t *testing.T) string {
	return writeRaw(t, func(tx *bolt.Tx) error {
		for _, name := range topLevelBucketsOfV1 {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("1")); err != nil {
			return err
		}
		cp, err := tx.Bucket(bucketCheckpoints).CreateBucket([]byte("crm"))
		if err != nil {
			return err
		}
		if err := cp.Put([]byte("/"), []byte("cursor-7")); err != nil {
			return err
		}
		return putV1Links(tx, Link{Connector: "crm", ExternalID: "e1", ContactID: "c1", SourceHash: "h"})
	})
}

// putV1Links stores links as version 1 did: format 1 values keyed by
// externalID in the ext bucket, the contact and seen buckets beside it.
func putV1Links(tx *bolt.Tx, ls ...Link) error {
	for _, l := range ls {
		c, err := tx.Bucket(bucketLinks).CreateBucketIfNotExists([]byte(l.Connector))
		if err != nil {
			return err
		}
		var ext, contact, seen *bolt.Bucket
		for _, b := range []struct {
			name []byte
			b    **bolt.Bucket
		}{{subExt, &ext}, {subContact, &contact}, {subSeen, &seen}} {
			if *b.b, err = c.CreateBucketIfNotExists(b.name); err != nil {
				return err
			}
		}
		if err := ext.Put([]byte(l.ExternalID), encodeLinkV1(l)); err != nil {
			return err
		}
		if err := contact.Put([]byte(l.ContactID), []byte(l.ExternalID)); err != nil {
			return err
		}
		if l.LastSeenRun != 0 {
			if err := seen.Put([]byte(l.ExternalID), u64(l.LastSeenRun)); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeLinkV1 is the format 1 encoder of schema version 1.
func encodeLinkV1(l Link) []byte {
	b := []byte{linkFormat1}
	for _, s := range []string{l.ContactID, l.RecordID, l.WorkspaceHash, l.SourceHash} {
		b = appendString(b, s)
	}
	for _, t := range []int64{nanos(l.WorkspaceWrittenAt), nanos(l.SourceWrittenAt),
		nanos(l.ContactUpdatedAt), nanos(l.SourceUpdatedAt)} {
		b = binary.AppendVarint(b, t)
	}
	b = appendMap(b, l.Fields, false)
	return appendMap(b, l.ItemIDs, false)
}

// TestMigrateCompactsLinks: a version 1 file's links, in format 1, read
// the same after the migration and are stored in format 2, smaller.
func TestMigrateCompactsLinks(t *testing.T) {
	hash := strings.Repeat("0123456789abcdef", 4)
	var want []Link
	for i := range 1200 { // more than one chunk of the rewrite
		want = append(want, Link{
			Connector: "crm", ExternalID: fmt.Sprintf("e%04d", i), ContactID: fmt.Sprintf("CT%016d", i), RecordID: fmt.Sprint(i),
			Fields:        map[string]string{"firstName": "Ada", "emails.work": "ada@example.com", "custom.tier": "gold", "odd": "x"},
			ItemIDs:       map[string]string{"emails.work": "it1"},
			WorkspaceHash: hash, SourceHash: hash, WorkspaceWrittenAt: time.Unix(1770000000, int64(i)).UTC(),
			LastSeenRun: uint64(i % 3),
		})
	}
	want = append(want, Link{Connector: "other", ExternalID: "x", ContactID: "c", WorkspaceHash: "w", SourceHash: "s"})
	path := writeRaw(t, func(tx *bolt.Tx) error {
		for _, name := range topLevelBucketsOfV1 {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("1")); err != nil {
			return err
		}
		return putV1Links(tx, want...)
	})
	var v1Size int
	readRaw(t, path, func(tx *bolt.Tx) error {
		v1Size = len(tx.Bucket(bucketLinks).Bucket([]byte("crm")).Bucket(subExt).Get([]byte("e0001")))
		return nil
	})
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	for _, w := range want {
		got, ok, err := s.Links.Get(w.Connector, w.ExternalID)
		if err != nil || !ok || !sameLink(got, w) {
			t.Fatalf("link %s after the migration: %+v %v %v, want %+v", w.ExternalID, got, ok, err, w)
		}
		if byContact, ok, err := s.Links.ByContact(w.Connector, w.ContactID); err != nil || !ok || !sameLink(byContact, w) {
			t.Fatalf("link of contact %s after the migration: %+v %v %v", w.ContactID, byContact, ok, err)
		}
	}
	must(t, s.Close())
	readRaw(t, path, func(tx *bolt.Tx) error {
		for _, c := range []string{"crm", "other"} {
			cb := tx.Bucket(bucketLinks).Bucket([]byte(c))
			for _, old := range [][]byte{subExt, subContact, subSeen} {
				if cb.Bucket(old) != nil {
					t.Errorf("connector %s keeps the old bucket %s", c, old)
				}
			}
			lb, ok := readLinks(tx, c)
			if !ok {
				t.Fatalf("connector %s has no link buckets", c)
			}
			cur := lb.links.Cursor()
			for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
				if _, v, _ := lb.stored(getU64(k)); v[0] != linkFormat2 {
					t.Fatalf("link %s/%d in format %d", c, getU64(k), v[0])
				}
			}
		}
		lb, _ := readLinks(tx, "crm")
		seq, _ := lb.lookup([]byte("e0001"))
		if _, v, _ := lb.stored(seq); len(v) >= v1Size-60 {
			t.Errorf("link of %d bytes after the migration, %d before: want at least 60 fewer", len(v), v1Size)
		}
		return nil
	})
}

// withMigrations appends ms to the migrations for the test.
func withMigrations(t *testing.T, ms ...migration) {
	old := migrations
	migrations = append(slices.Clone(old), ms...)
	t.Cleanup(func() { migrations = old })
}

func TestMigrateEmptyBboltFileToCurrent(t *testing.T) {
	path := writeRaw(t, func(*bolt.Tx) error { return nil }) // version 0: no bucket
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	if v, _ := s.SchemaVersion(); v != CurrentSchemaVersion() {
		t.Fatalf("version = %d", v)
	}
	must(t, s.Close())
	readRaw(t, path, func(tx *bolt.Tx) error {
		for _, name := range topLevelBucketsOfV1 {
			if tx.Bucket(name) == nil {
				t.Errorf("bucket %s missing", name)
			}
		}
		return nil
	})
}

func TestOpenCurrentV1FileKeepsData(t *testing.T) {
	s, err := Open(v1File(t), Options{NoSync: true})
	must(t, err)
	defer s.Close()
	if cp, _ := s.Checkpoints.Get("crm", ""); cp != "cursor-7" {
		t.Errorf("checkpoint = %q", cp)
	}
	if l, ok, _ := s.Links.ByContact("crm", "c1"); !ok || l.ExternalID != "e1" || l.SourceHash != "h" {
		t.Errorf("link = %+v, %v", l, ok)
	}
}

func TestMigrationRunsOnceInOrder(t *testing.T) {
	path := v1File(t)
	var calls []int
	withMigrations(t,
		migration{version: 2, name: "copy checkpoints to a new bucket", up: func(tx *bolt.Tx) error {
			calls = append(calls, 2)
			b, err := tx.CreateBucket([]byte("checkpointsV2"))
			if err != nil {
				return err
			}
			return tx.Bucket(bucketCheckpoints).ForEachBucket(func(name []byte) error {
				return b.Put(name, tx.Bucket(bucketCheckpoints).Bucket(name).Get([]byte("/")))
			})
		}},
		migration{version: 3, name: "rehash links", up: func(tx *bolt.Tx) error {
			calls = append(calls, 3)
			if tx.Bucket([]byte("checkpointsV2")) == nil {
				return errors.New("migration 2 did not run first")
			}
			lb, err := writeLinks(tx, "crm")
			if err != nil {
				return err
			}
			l, _, err := lb.get("crm", "e1")
			if err != nil {
				return err
			}
			l.SourceHash = "v3:" + l.SourceHash
			return lb.put(l)
		}},
	)

	// A read-only Open does not migrate.
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrMigrationNeeded) {
		t.Fatalf("read-only Open of an old file = %v, want ErrMigrationNeeded", err)
	}
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	if v, _ := s.SchemaVersion(); v != 3 {
		t.Fatalf("version = %d, want 3", v)
	}
	if l, _, _ := s.Links.Get("crm", "e1"); l.SourceHash != "v3:h" || l.ContactID != "c1" {
		t.Errorf("migrated link = %+v", l)
	}
	must(t, s.Close())
	s, err = Open(path, Options{NoSync: true})
	must(t, err)
	must(t, s.Close())
	if !slices.Equal(calls, []int{2, 3}) {
		t.Fatalf("migrations ran %v, want [2 3] once", calls)
	}
	readRaw(t, path, func(tx *bolt.Tx) error {
		// The real migrations ran first: the checkpoint copied is sealed.
		if got, err := openCheckpoint([]byte("/"), tx.Bucket([]byte("checkpointsV2")).Get([]byte("crm"))); err != nil || got != "cursor-7" {
			t.Errorf("copied checkpoint = %q", got)
		}
		return nil
	})
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	path := v1File(t)
	withMigrations(t,
		migration{version: 2, name: "good", up: func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte("fromV2"))
			return err
		}},
		migration{version: 3, name: "breaks halfway", up: func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketMeta).Put([]byte("junk"), []byte("x")); err != nil {
				return err
			}
			return errors.New("disk on fire")
		}},
	)
	_, err := Open(path, Options{NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "breaks halfway") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open = %v, want the failing migration named", err)
	}
	readRaw(t, path, func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != "1" {
			t.Errorf("version after a failed migration = %s, want 1", v)
		}
		if tx.Bucket([]byte("fromV2")) != nil || tx.Bucket(bucketMeta).Get([]byte("junk")) != nil {
			t.Error("a failed migration left changes behind")
		}
		return nil
	})
	// The file is still usable by a syncd that knows version 1 only.
	migrations = migrations[:1]
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	must(t, s.Close())
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := writeRaw(t, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchemaVersion, []byte("99"))
	})
	for _, readOnly := range []bool{false, true} {
		_, err := Open(path, Options{ReadOnly: readOnly, NoSync: true})
		if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), "99") || !strings.Contains(err.Error(), path) {
			t.Fatalf("Open (read-only %v) = %v, want ErrSchemaTooNew naming version 99 and the path", readOnly, err)
		}
	}
	readRaw(t, path, func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != "99" {
			t.Errorf("version rewritten to %s", v)
		}
		if tx.Bucket(bucketLinks) != nil {
			t.Error("Open created buckets in a newer file")
		}
		return nil
	})
}

func TestMigrationsAreOrdered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.name == "" || m.up == nil {
			t.Fatalf("migration %d = {%d %q}: versions must be 1, 2, 3, ... with a name", i, m.version, m.name)
		}
	}
}
