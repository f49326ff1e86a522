package state

import (
	"errors"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// checkpointKey maps a checkpoint name to its key; "" (the main cursor)
// becomes "/", which no other name can collide with.
func checkpointKey(name string) []byte { return []byte("/" + name) }

// Get returns the connector's checkpoint called name ("" is the
// main cursor; others are sub-cursors such as HubSpot's "archived"), or
// "" when none was set.
func (s *Checkpoints) Get(connector, name string) (string, error) {
	var v string
	err := s.view(fmt.Sprintf("read checkpoint %s/%s", connector, name), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints).Bucket([]byte(connector))
		if b != nil {
			v = string(b.Get(checkpointKey(name)))
		}
		return nil
	})
	return v, err
}

// Set records the connector's checkpoint called name. Call it
// only after every write of the batch it follows is recorded or
// dead-lettered (see the package comment). An empty value removes it.
func (s *Checkpoints) Set(connector, name, value string) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("set checkpoint: %w", err)
	}
	return s.update(fmt.Sprintf("set checkpoint %s/%s", connector, name), func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists([]byte(connector))
		if err != nil {
			return err
		}
		if value == "" {
			return b.Delete(checkpointKey(name))
		}
		return b.Put(checkpointKey(name), []byte(value))
	})
}

// Reset removes every checkpoint of the connector, so that its
// next run starts from the beginning.
func (s *Checkpoints) Reset(connector string) error {
	return s.update("reset checkpoints "+connector, func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketCheckpoints).DeleteBucket([]byte(connector))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// All returns every checkpoint of the connector by name ("" is
// the main cursor), for status reports.
func (s *Checkpoints) All(connector string) (map[string]string, error) {
	out := map[string]string{}
	err := s.view("read checkpoints "+connector, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if name, ok := strings.CutPrefix(string(k), "/"); ok && v != nil {
				out[name] = string(v)
			}
			return nil
		})
	})
	return out, err
}
