package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DeadLetter is a write that failed and was set aside so that its batch
// could go on. There is at most one per (Connector, Operation, Key).
type DeadLetter struct {
	ID        uint64 `json:"-"`
	Connector string `json:"connector"`
	// Operation is create, update, delete or writeback.
	Operation string `json:"operation"`
	// Key is the externalId (forward) or contactId (reverse).
	Key       string    `json:"key"`
	Payload   []byte    `json:"payload,omitempty"`
	Reason    string    `json:"reason"`
	Attempts  int       `json:"attempts"`
	NextTry   time.Time `json:"nextTry,omitzero"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// OpWriteBack is the operation of the write-back's dead letters of a
// linked contact's update, keyed by its contact id.
const OpWriteBack = "writeback"

// deadLetterKey is the unique key of a dead letter; its connector prefix
// lets one connector's letters be scanned alone.
func deadLetterKey(connector, operation, key string) []byte {
	return []byte(connector + "\x00" + operation + "\x00" + key)
}

// Add records d, or updates the letter of the same (Connector,
// Operation, Key): its attempts grow by d.Attempts (at least 1), and its
// reason, payload and next try are replaced. It returns the letter's ID.
func (s *DeadLetters) Add(d DeadLetter) (uint64, error) {
	if err := checkName("connector", d.Connector); err != nil {
		return 0, fmt.Errorf("add dead letter: %w", err)
	}
	if err := checkName("operation", d.Operation); err != nil {
		return 0, fmt.Errorf("add dead letter: %w", err)
	}
	var id uint64
	err := s.update(fmt.Sprintf("add dead letter %s %s %s", d.Connector, d.Operation, d.Key), func(tx *bolt.Tx) error {
		letters, keys := tx.Bucket(bucketDeadLetters), tx.Bucket(bucketDeadLetterKeys)
		now := s.now()
		add := max(d.Attempts, 1)
		k := deadLetterKey(d.Connector, d.Operation, d.Key)
		if raw := keys.Get(k); raw != nil {
			old, err := getDeadLetter(letters, getU64(raw))
			if err != nil {
				return err
			}
			d.ID, d.CreatedAt, d.Attempts = old.ID, old.CreatedAt, old.Attempts+add
		} else {
			next, err := letters.NextSequence()
			if err != nil {
				return err
			}
			d.ID, d.Attempts = next, add
			if d.CreatedAt.IsZero() {
				d.CreatedAt = now
			}
			if err := keys.Put(k, u64(d.ID)); err != nil {
				return err
			}
		}
		d.UpdatedAt = now
		raw, err := json.Marshal(d)
		if err != nil {
			return err
		}
		id = d.ID
		return letters.Put(u64(d.ID), raw)
	})
	return id, err
}

func getDeadLetter(letters *bolt.Bucket, id uint64) (DeadLetter, error) {
	raw := letters.Get(u64(id))
	if raw == nil {
		return DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, ErrNotFound)
	}
	var d DeadLetter
	if err := unmarshal(raw, &d); err != nil {
		return DeadLetter{}, fmt.Errorf("decode dead letter %d: %w", id, err)
	}
	d.ID = id
	return d, nil
}

// List returns the connector's dead letters ("" for all), oldest
// first.
func (s *DeadLetters) List(connector string) ([]DeadLetter, error) {
	var out []DeadLetter
	err := s.view("list dead letters "+connector, func(tx *bolt.Tx) error {
		letters := tx.Bucket(bucketDeadLetters)
		if connector == "" {
			return letters.ForEach(func(k, _ []byte) error {
				d, err := getDeadLetter(letters, getU64(k))
				out = append(out, d)
				return err
			})
		}
		var ids []uint64
		prefix := []byte(connector + "\x00")
		c := tx.Bucket(bucketDeadLetterKeys).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			ids = append(ids, getU64(v))
		}
		slices.Sort(ids)
		for _, id := range ids {
			d, err := getDeadLetter(letters, id)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// Get returns the dead letter id; ErrNotFound when there is none.
func (s *DeadLetters) Get(id uint64) (DeadLetter, error) {
	var d DeadLetter
	err := s.view(fmt.Sprintf("read dead letter %d", id), func(tx *bolt.Tx) error {
		var err error
		d, err = getDeadLetter(tx.Bucket(bucketDeadLetters), id)
		return err
	})
	return d, err
}

// Delete removes the dead letter id; ErrNotFound when there is
// none.
func (s *DeadLetters) Delete(id uint64) error {
	return s.update(fmt.Sprintf("delete dead letter %d", id), func(tx *bolt.Tx) error {
		letters := tx.Bucket(bucketDeadLetters)
		d, err := getDeadLetter(letters, id)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketDeadLetterKeys).Delete(deadLetterKey(d.Connector, d.Operation, d.Key)); err != nil {
			return err
		}
		return letters.Delete(u64(id))
	})
}

// Clear removes the letter of (connector, operation, key), if
// any: call it when a later attempt for that key succeeded.
func (s *DeadLetters) Clear(connector, operation, key string) error {
	return s.update(fmt.Sprintf("clear dead letter %s %s %s", connector, operation, key), func(tx *bolt.Tx) error {
		keys := tx.Bucket(bucketDeadLetterKeys)
		k := deadLetterKey(connector, operation, key)
		raw := keys.Get(k)
		if raw == nil {
			return nil
		}
		if err := tx.Bucket(bucketDeadLetters).Delete(u64(getU64(raw))); err != nil {
			return err
		}
		return keys.Delete(k)
	})
}

// Count returns the number of the connector's dead letters (""
// for all).
func (s *DeadLetters) Count(connector string) (int, error) {
	var n int
	err := s.view("count dead letters "+connector, func(tx *bolt.Tx) error {
		if connector == "" {
			n = tx.Bucket(bucketDeadLetters).Stats().KeyN
			return nil
		}
		prefix := []byte(connector + "\x00")
		c := tx.Bucket(bucketDeadLetterKeys).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}
