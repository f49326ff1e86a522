package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// subMatchDocs is the bucket, inside a connector's match index, that keeps
// the listed contacts themselves: adopting a matched contact then needs no
// second read of it. Its name cannot collide with an index key ("phone:",
// "email:", "claim:" prefixes).
var subMatchDocs = []byte("\x01docs")

// PutDocs stores contact snapshots (opaque bytes, by contact ID)
// beside the connector's match index, in one transaction. ClearIndex
// removes them with the index.
func (s *Matches) PutDocs(connector string, docs map[string][]byte) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("put match docs: %w", err)
	}
	return s.update(fmt.Sprintf("put %d match docs of %s", len(docs), connector), func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketMatchIndex).CreateBucketIfNotExists([]byte(connector))
		if err != nil {
			return err
		}
		d, err := b.CreateBucketIfNotExists(subMatchDocs)
		if err != nil {
			return err
		}
		for id, doc := range docs {
			if err := d.Put([]byte(id), doc); err != nil {
				return err
			}
		}
		return nil
	})
}

// Doc returns the snapshot of a listed contact; ok is false when
// there is none.
func (s *Matches) Doc(connector, contactID string) (doc []byte, ok bool, err error) {
	err = s.view(fmt.Sprintf("read match doc %s", connector), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMatchIndex).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		d := b.Bucket(subMatchDocs)
		if d == nil {
			return nil
		}
		if v := d.Get([]byte(contactID)); v != nil {
			doc, ok = append([]byte(nil), v...), true
		}
		return nil
	})
	return doc, ok, err
}

// HasIndex reports whether the connector has a match index.
func (s *Matches) HasIndex(connector string) (bool, error) {
	var ok bool
	err := s.view("has index "+connector, func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketMatchIndex).Bucket([]byte(connector)) != nil
		return nil
	})
	return ok, err
}
