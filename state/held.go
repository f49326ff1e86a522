package state

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Held matches (records whose match against existing contacts was
// ambiguous and waits for an operator) are kept per connector as opaque
// payloads by externalID.

// PutHeld records (or replaces) the held match of (connector, externalID).
func (s *Matches) PutHeld(connector, externalID string, payload []byte) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("put held: %w", err)
	}
	if externalID == "" {
		return fmt.Errorf("put held %s: empty externalID", connector)
	}
	return s.update(fmt.Sprintf("put held %s/%s", connector, externalID), func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketHeld).CreateBucketIfNotExists([]byte(connector))
		if err != nil {
			return err
		}
		if payload == nil {
			payload = []byte{}
		}
		return b.Put([]byte(externalID), payload)
	})
}

// Held returns the connector's held matches by externalID. ForEachHeld
// reads them in bounded memory.
func (s *Matches) Held(connector string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := s.ForEachHeld(connector, func(externalID string, payload []byte) error {
		out[externalID] = payload
		return nil
	})
	return out, err
}

// ForEachHeld calls fn with each held match of the connector in
// externalID order, in chunks read outside fn (fn may write to the
// store), as Links.ForEach does. payload is fn's to keep.
func (s *Matches) ForEachHeld(connector string, fn func(externalID string, payload []byte) error) error {
	type entry struct {
		id      string
		payload []byte
	}
	var after []byte
	for {
		batch := make([]entry, 0, linkChunk)
		err := s.view("scan held "+connector, func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketHeld).Bucket([]byte(connector))
			if b == nil {
				return nil
			}
			c := b.Cursor()
			for k, v := seekAfter(c, after); k != nil && len(batch) < linkChunk; k, v = c.Next() {
				batch = append(batch, entry{string(k), bytes.Clone(v)})
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, e := range batch {
			if err := fn(e.id, e.payload); err != nil {
				return err
			}
		}
		if len(batch) < linkChunk {
			return nil
		}
		after = []byte(batch[len(batch)-1].id)
	}
}

// CountHeld returns the number of the connector's held matches.
func (s *Matches) CountHeld(connector string) (int, error) {
	var n int
	err := s.view("count held "+connector, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketHeld).Bucket([]byte(connector)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// DeleteHeld removes the held match of (connector, externalID); deleting
// a missing one is not an error.
func (s *Matches) DeleteHeld(connector, externalID string) error {
	return s.update(fmt.Sprintf("delete held %s/%s", connector, externalID), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHeld).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		return b.Delete([]byte(externalID))
	})
}

// IndexEntry maps a match key ("phone:+15551234567", "email:a@b.example")
// to a workspace contact that carries it. A key may map to several
// contacts: that is how ambiguity shows.
type IndexEntry struct {
	Key, ContactID string
}

// indexKey is key\0contactID: one bbolt key per pair, so that a key's
// contacts are a prefix scan.
func indexKey(key, contactID string) []byte {
	return []byte(key + "\x00" + contactID)
}

// PutIndex adds entries to the connector's match index in one
// transaction. Adding an entry twice keeps one.
func (s *Matches) PutIndex(connector string, entries []IndexEntry) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("put index entries: %w", err)
	}
	return s.update(fmt.Sprintf("put %d index entries of %s", len(entries), connector), func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketMatchIndex).CreateBucketIfNotExists([]byte(connector))
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Key == "" || e.ContactID == "" || strings.IndexByte(e.Key, 0) >= 0 {
				return fmt.Errorf("index entry %q -> %q: key and contact are required, and the key has no NUL byte", e.Key, e.ContactID)
			}
			if err := b.Put(indexKey(e.Key, e.ContactID), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// Lookup returns the contacts that carry key in the connector's
// match index, sorted; none when the key is unknown.
func (s *Matches) Lookup(connector, key string) ([]string, error) {
	var ids []string
	err := s.view(fmt.Sprintf("look up index %s", connector), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMatchIndex).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		prefix := []byte(key + "\x00")
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			ids = append(ids, string(k[len(prefix):]))
		}
		return nil
	})
	return ids, err
}

// ClearIndex removes the connector's whole match index.
func (s *Matches) ClearIndex(connector string) error {
	return s.update("clear index "+connector, func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketMatchIndex).DeleteBucket([]byte(connector))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// DeleteIndex removes entries from the connector's match index (a
// contact deleted or changed since the listing); missing ones are ignored.
func (s *Matches) DeleteIndex(connector string, entries []IndexEntry) error {
	return s.update(fmt.Sprintf("delete %d index entries of %s", len(entries), connector), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMatchIndex).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		for _, e := range entries {
			if err := b.Delete(indexKey(e.Key, e.ContactID)); err != nil {
				return err
			}
		}
		return nil
	})
}
