package state

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// HeldDelete is a record deletion the write-back held back: a contact
// deleted in the workspace whose record onWorkspaceDelete: delete would
// delete, held because the deletions of the connector went over its
// massDeleteThreshold. It waits for an operator to approve (the record is
// deleted) or drop (the record stays) it.
type HeldDelete struct {
	Connector  string    `json:"connector"`
	ContactID  string    `json:"contactId"`
	ExternalID string    `json:"externalId"`
	RecordID   string    `json:"recordId"`
	HeldAt     time.Time `json:"heldAt"`
}

// heldDeletesBucket names the nested bucket, inside the held bucket, of
// a connector's held deletions: a NUL byte keeps it apart from the held
// matches' buckets, named after connectors (which cannot hold one).
func heldDeletesBucket(connector string) []byte { return []byte("deletes\x00" + connector) }

// Put records held deletions, by contact (one held again
// replaces itself), in one transaction.
func (s *HeldDeletes) Put(ds []HeldDelete) error {
	if len(ds) == 0 {
		return nil
	}
	for _, d := range ds {
		if err := checkName("connector", d.Connector); err != nil {
			return fmt.Errorf("hold deletes: %w", err)
		}
		if d.ContactID == "" {
			return fmt.Errorf("hold deletes of %s: empty contact id", d.Connector)
		}
	}
	return s.update(fmt.Sprintf("hold %d deletes", len(ds)), func(tx *bolt.Tx) error {
		for _, d := range ds {
			b, err := tx.Bucket(bucketHeld).CreateBucketIfNotExists(heldDeletesBucket(d.Connector))
			if err != nil {
				return err
			}
			v, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(d.ContactID), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// List returns the connector's held deletions, oldest first (by
// contact on a tie).
func (s *HeldDeletes) List(connector string) ([]HeldDelete, error) {
	var out []HeldDelete
	err := s.view("read held deletes "+connector, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHeld).Bucket(heldDeletesBucket(connector))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var d HeldDelete
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("held delete %s: %w", k, err)
			}
			out = append(out, d)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].HeldAt.Before(out[j].HeldAt) })
	return out, err
}

// Count returns how many deletions of the connector are held.
func (s *HeldDeletes) Count(connector string) (int, error) {
	n := 0
	err := s.view("count held deletes "+connector, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketHeld).Bucket(heldDeletesBucket(connector)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// Drop forgets the held deletions of these contacts (those not
// held are ignored).
func (s *HeldDeletes) Drop(connector string, contactIDs []string) error {
	return s.update("drop held deletes "+connector, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketHeld).Bucket(heldDeletesBucket(connector))
		if b == nil {
			return nil
		}
		for _, id := range contactIDs {
			if err := b.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Is reports whether the deletion of the contact's record is
// held for the connector.
func (s *HeldDeletes) Is(connector, contactID string) (bool, error) {
	held := false
	err := s.view("read held delete "+connector, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketHeld).Bucket(heldDeletesBucket(connector)); b != nil {
			held = b.Get([]byte(contactID)) != nil
		}
		return nil
	})
	return held, err
}
