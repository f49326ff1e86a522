package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Top-level buckets. Per-connector data lives in a nested bucket named
// after the connector inside the bucket of its concern.
var (
	bucketMeta             = []byte("meta")           // schemaVersion
	bucketCheckpoints      = []byte("checkpoints")    // <connector>/ "/"+name -> value
	bucketLinks            = []byte("links")          // <connector>/{ext,contact,seen}
	bucketEvents           = []byte("events")         // webhook id -> expiry (8 bytes, Unix ns)
	bucketEventExpiry      = []byte("eventExpiry")    // expiry(8)+id -> nil, for pruning
	bucketInbox            = []byte("inbox")          // seq(8) -> InboxEvent JSON
	bucketDeadLetters      = []byte("deadLetters")    // id(8) -> DeadLetter JSON
	bucketDeadLetterKeys   = []byte("deadLetterKeys") // connector\0operation\0key -> id(8)
	bucketRuns             = []byte("runs")           // id(8) -> Run JSON
	bucketRunIndex         = []byte("runIndex")       // <connector>/ id(8) -> nil
	bucketConflicts        = []byte("conflicts")      // id(8) -> Conflict JSON
	bucketConflictIndex    = []byte("conflictIndex")  // <connector>/ id(8) -> nil
	bucketHeld             = []byte("held")           // <connector>/ externalID -> payload
	bucketMatchIndex       = []byte("matchIndex")     // <connector>/ key\0contactID -> nil
	bucketWebhookSecrets   = []byte("webhookSecrets") // webhookID\0secret -> JSON
	keySchemaVersion       = []byte("schemaVersion")
	topLevelBucketsOfV1    = [][]byte{bucketMeta, bucketCheckpoints, bucketLinks, bucketEvents, bucketEventExpiry, bucketInbox, bucketDeadLetters, bucketDeadLetterKeys, bucketRuns, bucketRunIndex, bucketConflicts, bucketConflictIndex, bucketHeld, bucketMatchIndex, bucketWebhookSecrets}
	errForeignBoltDatabase = errors.New("bbolt database without syncd metadata (another program's file?)")
)

// A migration moves the file from version-1 to version. It runs inside
// the transaction that records the new version: it applies entirely or
// not at all.
type migration struct {
	version int
	name    string
	up      func(tx *bolt.Tx) error
}

// migrations is the ordered list of schema changes; the current schema
// version is the last one's. Append, never edit or reorder: files in the
// field carry the version they reached.
var migrations = []migration{
	{version: 1, name: "create buckets", up: func(tx *bolt.Tx) error {
		for _, name := range topLevelBucketsOfV1 {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	}},
	{version: 2, name: "compact links", up: compactLinks},
	{version: 3, name: "trim link externalIDs", up: trimLinkIDs},
	{version: 4, name: "checksum checkpoints", up: sealCheckpoints},
}

// CurrentSchemaVersion is the schema version this syncd writes.
func CurrentSchemaVersion() int { return migrations[len(migrations)-1].version }

// SchemaVersion returns the file's schema version.
func (s *Store) SchemaVersion() (int, error) {
	var v int
	err := s.view("read schema version", func(tx *bolt.Tx) error {
		var err error
		v, err = readVersion(tx)
		return err
	})
	return v, err
}

// readVersion returns the stored version: 0 for a file that holds no
// bucket at all (freshly created), an error for a bbolt file of another
// program.
func readVersion(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		empty := true
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return 0, fmt.Errorf("%w: %w", ErrInvalidFile, errForeignBoltDatabase)
		}
		return 0, nil
	}
	raw := meta.Get(keySchemaVersion)
	if raw == nil {
		return 0, fmt.Errorf("%w: meta bucket without schemaVersion", ErrInvalidFile)
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: bad schemaVersion %q", ErrInvalidFile, raw)
	}
	return v, nil
}

// migrate brings the file to the current version in one transaction.
func (s *Store) migrate(readOnly bool) error {
	check := func(v int) error {
		if cur := CurrentSchemaVersion(); v > cur {
			return fmt.Errorf("%w: file is at version %d, this syncd knows up to %d", ErrSchemaTooNew, v, cur)
		}
		return nil
	}
	if readOnly {
		v, err := s.SchemaVersion()
		if err != nil {
			return err
		}
		if err := check(v); err != nil {
			return err
		}
		if v < CurrentSchemaVersion() {
			return fmt.Errorf("%w: file is at version %d, current is %d", ErrMigrationNeeded, v, CurrentSchemaVersion())
		}
		return nil
	}
	return s.tx(true, func(tx *bolt.Tx) error {
		v, err := readVersion(tx)
		if err != nil {
			return err
		}
		if err := check(v); err != nil {
			return err
		}
		for _, m := range migrations {
			if m.version <= v {
				continue
			}
			if err := m.up(tx); err != nil {
				return fmt.Errorf("migrate to version %d (%s): %w", m.version, m.name, err)
			}
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			if err := meta.Put(keySchemaVersion, []byte(strconv.Itoa(m.version))); err != nil {
				return err
			}
		}
		return nil
	})
}

// compactLinks moves every connector's links to the layout of link.go:
// values in format 2 (linkcodec.go) keyed by sequence numbers in
// externalID order, the ids and contacts indexes, and drops the buckets of
// version 1 (ext, contact, seen). It runs inside the migration's
// transaction.
func compactLinks(tx *bolt.Tx) error {
	links := tx.Bucket(bucketLinks)
	if links == nil {
		return nil
	}
	var connectors [][]byte
	if err := links.ForEachBucket(func(k []byte) error {
		connectors = append(connectors, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, name := range connectors {
		if err := relayLinks(links.Bucket(name), string(name)); err != nil {
			return err
		}
	}
	return nil
}

// relayLinks moves one connector's links from the version 1 buckets to
// the current ones. A reverse entry is kept only where it names its link.
func relayLinks(c *bolt.Bucket, connector string) error {
	ext, contact, seen := c.Bucket(subExt), c.Bucket(subContact), c.Bucket(subSeen)
	lb, err := createLinkBuckets(c)
	if err != nil {
		return err
	}
	if ext != nil {
		cur := ext.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			var run uint64
			if seen != nil {
				run = getU64(seen.Get(k))
			}
			l, err := decodeLink(connector, string(k), v, run)
			if err != nil {
				return err
			}
			seq, err := lb.links.NextSequence()
			if err != nil {
				return err
			}
			if err := lb.links.Put(u64(seq), storedValue(l)); err != nil {
				return err
			}
			if err := lb.ids.Put(k, binary.AppendUvarint(nil, seq)); err != nil {
				return err
			}
			if contact != nil && bytes.Equal(contact.Get([]byte(l.ContactID)), k) {
				if err := lb.contacts.Put(contactKey(l.ContactID, seq), nil); err != nil {
					return err
				}
			}
		}
	}
	for _, old := range [][]byte{subExt, subContact, subSeen} {
		if c.Bucket(old) == nil {
			continue
		}
		if err := c.DeleteBucket(old); err != nil {
			return err
		}
	}
	return nil
}
