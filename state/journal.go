package state

import (
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// journal is an append-mostly list of JSON entries numbered by a sequence
// (runs, conflicts): a flat bucket id -> entry, and an index bucket with
// one nested bucket per connector, id -> nil, for per-connector listings
// newest first without scanning other connectors' entries.
type journal struct {
	entries, index []byte
}

var (
	runJournal      = journal{bucketRuns, bucketRunIndex}
	conflictJournal = journal{bucketConflicts, bucketConflictIndex}
)

// next reserves the next id.
func (j journal) next(tx *bolt.Tx) (uint64, error) {
	return tx.Bucket(j.entries).NextSequence()
}

// put writes entry v under id for connector.
func (j journal) put(tx *bolt.Tx, connector string, id uint64, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	idx, err := tx.Bucket(j.index).CreateBucketIfNotExists([]byte(connector))
	if err != nil {
		return err
	}
	if err := idx.Put(u64(id), nil); err != nil {
		return err
	}
	return tx.Bucket(j.entries).Put(u64(id), raw)
}

// newest calls fn with the raw entries of connector ("" for all), newest
// first, until fn returns errStop or limit entries were given (limit <= 0:
// no limit).
func (j journal) newest(tx *bolt.Tx, connector string, limit int, fn func(id uint64, raw []byte) error) error {
	entries := tx.Bucket(j.entries)
	var c *bolt.Cursor
	if connector == "" {
		c = entries.Cursor()
	} else {
		idx := tx.Bucket(j.index).Bucket([]byte(connector))
		if idx == nil {
			return nil
		}
		c = idx.Cursor()
	}
	n := 0
	for k, _ := c.Last(); k != nil && (limit <= 0 || n < limit); k, _ = c.Prev() {
		raw := entries.Get(k)
		if raw == nil {
			continue // pruned entry whose index key remained
		}
		if err := fn(getU64(k), raw); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		n++
	}
	return nil
}

// count returns the number of entries of connector ("" for all).
func (j journal) count(tx *bolt.Tx, connector string) int {
	if connector == "" {
		return tx.Bucket(j.entries).Stats().KeyN
	}
	idx := tx.Bucket(j.index).Bucket([]byte(connector))
	if idx == nil {
		return 0
	}
	return idx.Stats().KeyN
}

// prune keeps the newest keep entries of each connector and returns how
// many it removed.
func (j journal) prune(tx *bolt.Tx, keep int) (int, error) {
	removed := 0
	entries := tx.Bucket(j.entries)
	err := tx.Bucket(j.index).ForEachBucket(func(name []byte) error {
		idx := tx.Bucket(j.index).Bucket(name)
		c := idx.Cursor()
		n := 0
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			if n++; n <= keep {
				continue
			}
			id := u64(getU64(k))
			if err := entries.Delete(id); err != nil {
				return err
			}
			removed++
		}
		// Delete the index keys after the scan: deleting under a cursor
		// that walks backwards skips keys.
		var stale [][]byte
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if entries.Get(k) == nil {
				stale = append(stale, append([]byte{}, k...))
			}
		}
		for _, k := range stale {
			if err := idx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("prune %s: %w", j.entries, err)
	}
	return removed, nil
}
