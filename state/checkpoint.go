package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// checkpointKey maps a checkpoint name to its key; "" (the main cursor)
// becomes "/", which no other name can collide with.
func checkpointKey(name string) []byte { return []byte("/" + name) }

// A checkpoint's value is stored with a CRC-32C of its key and value
// after it (schema version 4): a cursor damaged in the file would
// otherwise go to the source as it is, where it fails with an error that
// does not name the state file, or silently skips changes.
var checkpointTable = crc32.MakeTable(crc32.Castagnoli)

const checkpointSumSize = 4

// sealCheckpoint is the stored form of value under key.
func sealCheckpoint(key, value []byte) []byte {
	sum := crc32.Update(crc32.Checksum(key, checkpointTable), checkpointTable, value)
	return binary.BigEndian.AppendUint32(append(make([]byte, 0, len(value)+checkpointSumSize), value...), sum)
}

// openCheckpoint returns the value that sealCheckpoint stored under key;
// its errors wrap errDecode (the file is damaged).
func openCheckpoint(key, raw []byte) (string, error) {
	if len(raw) < checkpointSumSize {
		return "", fmt.Errorf("checkpoint %q: %w: %d bytes", key, errDecode, len(raw))
	}
	value, sum := raw[:len(raw)-checkpointSumSize], binary.BigEndian.Uint32(raw[len(raw)-checkpointSumSize:])
	if crc32.Update(crc32.Checksum(key, checkpointTable), checkpointTable, value) != sum {
		return "", fmt.Errorf("checkpoint %q: %w: checksum mismatch", key, errDecode)
	}
	return string(value), nil
}

// sealCheckpoints (migration 4) adds the checksum to every stored
// checkpoint.
func sealCheckpoints(tx *bolt.Tx) error {
	return tx.Bucket(bucketCheckpoints).ForEachBucket(func(name []byte) error {
		b := tx.Bucket(bucketCheckpoints).Bucket(name)
		var keys, values [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			if v != nil && bytes.HasPrefix(k, []byte("/")) {
				keys, values = append(keys, bytes.Clone(k)), append(values, sealCheckpoint(k, v))
			}
			return nil
		}); err != nil {
			return err
		}
		for i, k := range keys {
			if err := b.Put(k, values[i]); err != nil {
				return fmt.Errorf("seal checkpoint %s/%s: %w", name, k, err)
			}
		}
		return nil
	})
}

// Get returns the connector's checkpoint called name ("" is the
// main cursor; others are sub-cursors such as HubSpot's "archived"), or
// "" when none was set.
func (s *Checkpoints) Get(connector, name string) (string, error) {
	var v string
	err := s.view(fmt.Sprintf("read checkpoint %s/%s", connector, name), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints).Bucket([]byte(connector))
		if b == nil {
			return nil
		}
		key := checkpointKey(name)
		raw := b.Get(key)
		if raw == nil {
			return nil
		}
		var err error
		v, err = openCheckpoint(key, raw)
		return err
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
		key := checkpointKey(name)
		return b.Put(key, sealCheckpoint(key, []byte(value)))
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
			name, ok := strings.CutPrefix(string(k), "/")
			if !ok || v == nil {
				return nil
			}
			value, err := openCheckpoint(k, v)
			out[name] = value
			return err
		})
	})
	return out, err
}
