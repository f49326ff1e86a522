package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketFieldWarnings holds the field warnings: connector\0key\0field ->
// FieldWarning JSON. It is made on first use, like the history bucket:
// files of every schema version read it as empty until then.
var bucketFieldWarnings = []byte("fieldWarnings")

// FieldWarning is a value of a record that syncd left out of its contact
// (a phone number that is not one) so that the rest of the record could
// sync. There is at most one per (Connector, Key, Field); it stands until
// the record's value maps, or the record is gone.
type FieldWarning struct {
	Connector string `json:"connector"`
	// Key is the record's externalId.
	Key      string `json:"key"`
	RecordID string `json:"recordId,omitempty"`
	// Field is the workspace target ("phoneNumbers.mobile"), From the
	// record field, Value the record's value as read.
	Field  string `json:"field"`
	From   string `json:"from"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	// CreatedAt is when syncd first met this value.
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// same reports whether w says what o says: the same value, for the same
// reason.
func (w FieldWarning) same(o FieldWarning) bool {
	return w.Value == o.Value && w.Reason == o.Reason && w.From == o.From
}

func fieldWarningPrefix(connector, key string) []byte {
	return []byte(connector + "\x00" + key + "\x00")
}

// Set makes ws the warnings of the record key of connector,
// replacing those it had (none: the record maps whole again, its warnings
// go). It returns the warnings of ws that are new or whose value or
// reason changed: the ones to report; the others keep their CreatedAt.
func (s *FieldWarnings) Set(connector, key string, ws []FieldWarning) (fresh []FieldWarning, err error) {
	if err := checkName("connector", connector); err != nil {
		return nil, fmt.Errorf("set field warnings: %w", err)
	}
	err = s.update(fmt.Sprintf("set field warnings %s %s", connector, key), func(tx *bolt.Tx) error {
		fresh = nil
		b, err := tx.CreateBucketIfNotExists(bucketFieldWarnings)
		if err != nil {
			return err
		}
		prefix := fieldWarningPrefix(connector, key)
		old := map[string]FieldWarning{}
		var stale [][]byte
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var w FieldWarning
			if err := unmarshal(v, &w); err != nil {
				return fmt.Errorf("decode field warning %q: %w", k, err)
			}
			old[w.Field] = w
			stale = append(stale, slices.Clone(k))
		}
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		now := s.now()
		for _, w := range ws {
			w.Connector, w.Key = connector, key
			if o, ok := old[w.Field]; ok && o.same(w) {
				w.CreatedAt = o.CreatedAt
			} else {
				w.CreatedAt = now
				fresh = append(fresh, w)
			}
			raw, err := json.Marshal(w)
			if err != nil {
				return err
			}
			if err := b.Put(append(slices.Clone(prefix), w.Field...), raw); err != nil {
				return err
			}
		}
		return nil
	})
	return fresh, err
}

// List returns the connector's field warnings ("" for all),
// by connector, record and field.
func (s *FieldWarnings) List(connector string) ([]FieldWarning, error) {
	var out []FieldWarning
	err := s.view("list field warnings "+connector, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFieldWarnings)
		if b == nil {
			return nil
		}
		var prefix []byte
		if connector != "" {
			prefix = []byte(connector + "\x00")
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var w FieldWarning
			if err := unmarshal(v, &w); err != nil {
				return fmt.Errorf("decode field warning %q: %w", strings.ReplaceAll(string(k), "\x00", "/"), err)
			}
			out = append(out, w)
		}
		return nil
	})
	return out, err
}

// Count returns the number of the connector's field warnings
// ("" for all).
func (s *FieldWarnings) Count(connector string) (int, error) {
	var n int
	err := s.view("count field warnings "+connector, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFieldWarnings)
		if b == nil {
			return nil
		}
		if connector == "" {
			n = b.Stats().KeyN
			return nil
		}
		prefix := []byte(connector + "\x00")
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// Of returns the field warnings of one record, by field.
func (s *FieldWarnings) Of(connector, key string) ([]FieldWarning, error) {
	var out []FieldWarning
	err := s.view(fmt.Sprintf("read field warnings %s %s", connector, key), func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFieldWarnings)
		if b == nil {
			return nil
		}
		prefix := fieldWarningPrefix(connector, key)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var w FieldWarning
			if err := unmarshal(v, &w); err != nil {
				return fmt.Errorf("decode field warning %s/%s: %w", connector, key, err)
			}
			out = append(out, w)
		}
		return nil
	})
	return out, err
}
