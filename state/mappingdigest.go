package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// mappingDigestKey keeps, beside a connector's checkpoints, the digest of
// the mapping its records were last read whole under. It has no "/"
// prefix, so it is no checkpoint name; Checkpoints.Reset drops it too (a
// reset reads everything again anyway).
var mappingDigestKey = []byte("mapping-digest")

// MappingDigest returns the digest of the mapping the connector's records
// were last read whole under, "" when none was recorded.
func (s *Checkpoints) MappingDigest(connector string) (string, error) {
	var v string
	err := s.view("read mapping digest "+connector, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketCheckpoints).Bucket([]byte(connector)); b != nil {
			v = string(b.Get(mappingDigestKey))
		}
		return nil
	})
	return v, err
}

// SetMappingDigest records the digest of the mapping every record of the
// connector has now been read under. Call it only after a pass that read
// every record completed.
func (s *Checkpoints) SetMappingDigest(connector, digest string) error {
	if err := checkName("connector", connector); err != nil {
		return fmt.Errorf("set mapping digest: %w", err)
	}
	return s.update("set mapping digest "+connector, func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists([]byte(connector))
		if err != nil {
			return err
		}
		return b.Put(mappingDigestKey, []byte(digest))
	})
}
