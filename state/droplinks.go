package state

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Drop removes every link of the connector in one transaction (a
// resync rebuilds them from the workspace). Checkpoints, dead letters and
// history are kept.
func (s *Links) Drop(connector string) error {
	return s.update(fmt.Sprintf("drop links %s", connector), func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketLinks).DeleteBucket([]byte(connector))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}
