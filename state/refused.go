package state

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// RefusedDelete is a mass delete the guard refused (a TRUNCATE, a
// source emptied by mistake): kept, across passes and restarts, until
// the operator acts on it (a resync with --allow-mass-delete, or one
// that finds the records back), so that the status keeps saying so.
type RefusedDelete struct {
	// At is when the guard last refused.
	At time.Time `json:"at"`
	// Kind is the pass that was refused (run, resync).
	Kind string `json:"kind"`
	// Reason is the refusal, with its figures.
	Reason string `json:"reason"`
}

// refusedDeletePrefix keys a connector's refusal in the meta bucket.
const refusedDeletePrefix = "refusedDelete/"

// Get returns the connector's refused mass delete; ok false
// when none stands.
func (s *RefusedDeletes) Get(connector string) (r RefusedDelete, ok bool, err error) {
	err = s.view("read refused delete "+connector, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		v := meta.Get([]byte(refusedDeletePrefix + connector))
		if v == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(v, &r)
	})
	return r, ok, err
}

// Set records the connector's refused mass delete, over any
// earlier one.
func (s *RefusedDeletes) Set(connector string, r RefusedDelete) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("set refused delete: %w", err)
	}
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("set refused delete %s: %w", connector, err)
	}
	return s.update("set refused delete "+connector, func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put([]byte(refusedDeletePrefix+connector), v)
	})
}

// Clear drops the connector's refused mass delete; it
// reports whether one stood.
func (s *RefusedDeletes) Clear(connector string) (cleared bool, err error) {
	// Most passes find none: no write transaction for them.
	if _, ok, err := s.Get(connector); err != nil || !ok {
		return false, err
	}
	err = s.update("clear refused delete "+connector, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return nil
		}
		key := []byte(refusedDeletePrefix + connector)
		if meta.Get(key) == nil {
			return nil
		}
		cleared = true
		return meta.Delete(key)
	})
	return cleared, err
}
