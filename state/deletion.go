package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// reverseDeletion keys a ContactDeletion in a connector's reverse bucket
// ("d\x00" + contactID).
const reverseDeletion = "d\x00"

// ContactDeletion is a contact the forward direction deleted in the
// workspace because its record was gone (onSourceDelete: delete),
// recorded before the DELETE is sent. An app edit that lands while the
// DELETE is in flight (after syncd's last look at the inbox, before the
// workspace applies it) is deleted with the contact; its event, newer
// than Seen, reaches the write-back after the link is gone, and is
// settled by editAfterDelete with the deletion's time rather than
// dropped.
type ContactDeletion struct {
	Connector  string `json:"connector"`
	ContactID  string `json:"contactId"`
	ExternalID string `json:"externalId"`
	// Fields are the link's agreed values when the contact was deleted.
	Fields map[string]string `json:"fields,omitempty"`
	// Seen is the updatedAt of the contact version weighed before the
	// delete: a version newer than it was not.
	Seen time.Time `json:"seen"`
	// RecordDeletedAt is when the record was deleted (its source's
	// time, else when the pass learnt it).
	RecordDeletedAt time.Time `json:"recordDeletedAt"`
	// At is when the delete was sent (set by PutDeletion).
	At time.Time `json:"at"`
}

// A ContactDeletion waits for the contact's deletion event, or an app
// edit's: webhooks come within seconds, retried deliveries within days.
// One whose event never comes (a delivery given up) is forgotten after
// deletionTTL, by the PutDeletion that comes at least deletionPruneEvery
// after the last look, so that the entries stay bounded by the deletions
// of a week.
const (
	deletionTTL        = 7 * 24 * time.Hour
	deletionPruneEvery = time.Hour
)

// deletionPrune is when PutDeletion last forgot the old deletions.
type deletionPrune struct {
	mu   sync.Mutex
	last time.Time
}

// due reports whether it is time to look for old deletions, and notes
// the look.
func (p *deletionPrune) due(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < deletionPruneEvery {
		return false
	}
	p.last = now
	return true
}

// PutDeletion records d (replacing one of the same contact), and now and
// then forgets the deletions older than deletionTTL.
func (s *Reverse) PutDeletion(d ContactDeletion) error {
	d.At = s.now()
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode deletion of contact %s: %w", d.ContactID, err)
	}
	prune := s.deletions.due(d.At)
	return s.update("put deletion "+d.Connector+"/"+d.ContactID, func(tx *bolt.Tx) error {
		b, err := reverseWrite(tx, d.Connector)
		if err != nil {
			return err
		}
		if prune {
			if err := pruneDeletions(b, d.At.Add(-deletionTTL)); err != nil {
				return err
			}
		}
		return b.Put([]byte(reverseDeletion+d.ContactID), raw)
	})
}

// pruneDeletions removes from a connector's reverse bucket the deletions
// put before before (and any that cannot be read).
func pruneDeletions(b *bolt.Bucket, before time.Time) error {
	prefix := []byte(reverseDeletion)
	var old [][]byte
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var d ContactDeletion
		if json.Unmarshal(v, &d) != nil || d.At.Before(before) {
			old = append(old, append([]byte(nil), k...))
		}
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// DeletionOf returns the deletion of (connector, contactID) recorded by
// PutDeletion; ok false when there is none.
func (s *Reverse) DeletionOf(connector, contactID string) (d ContactDeletion, ok bool, err error) {
	err = s.view("read deletion "+connector+"/"+contactID, func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(reverseDeletion + contactID))
		if raw == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(raw, &d)
	})
	return d, ok, err
}

// DropDeletion removes the deletion of (connector, contactID), if any:
// the contact was kept after all.
func (s *Reverse) DropDeletion(connector, contactID string) error {
	return s.update("drop deletion "+connector+"/"+contactID, func(tx *bolt.Tx) error {
		return dropDeletion(tx, connector, contactID)
	})
}

// dropDeletion removes the deletion of (connector, contactID) inside tx.
func dropDeletion(tx *bolt.Tx, connector, contactID string) error {
	if b := reverseRead(tx, connector); b != nil {
		return b.Delete([]byte(reverseDeletion + contactID))
	}
	return nil
}
