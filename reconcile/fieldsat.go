package reconcile

import (
	"reflect"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// keptFieldsAt is when the record read again (now) came to hold the
// values it still holds as the stream copy did: the copy's FieldsAt, else
// the copy's UpdatedAt (the row held them then already), when older than
// now's. However often the row changed since (syncd's own write-backs
// included), a value's time stands.
func keptFieldsAt(copy, now connector.Record) map[string]time.Time {
	var out map[string]time.Time
	for k, v := range copy.Fields {
		at, ok := copy.FieldsAt[k]
		if !ok {
			at = copy.UpdatedAt
		}
		if at.IsZero() || !at.Before(now.UpdatedAt) {
			continue
		}
		if nv, ok := now.Fields[k]; ok && reflect.DeepEqual(nv, v) {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[k] = at
		}
	}
	return out
}

// readAgain returns now, the record read again in place of copy, with
// the times of the values it still holds as copy did (keptFieldsAt)
// and, when copy came from a change stream, the fields whose values
// changed since (connector.Record's Unsettled): the stream hands over
// the versions that made them later, and their own times with them.
// Weighed now, at now's UpdatedAt, such a value may be taken for newer
// than an app edit made before a later edit of another column.
func readAgain(copy, now connector.Record, streamed bool) connector.Record {
	now.FieldsAt = keptFieldsAt(copy, now)
	now.Unsettled = nil
	if !streamed {
		return now
	}
	for k, v := range now.Fields {
		cv, ok := copy.Fields[k]
		if ok && reflect.DeepEqual(cv, v) && !copy.Unsettled[k] {
			continue
		}
		if now.Unsettled == nil {
			now.Unsettled = map[string]bool{}
		}
		now.Unsettled[k] = true
		delete(now.FieldsAt, k) // the copy's time is not the value's
	}
	return now
}

// streamReader reports whether a reader hands over a change stream's row
// images (PostgreSQL's logical replication slot, MySQL's binlog) rather
// than reading rows as they are.
func streamReader(rd connector.Source) bool {
	lr, ok := rd.(interface {
		ReplicationLag() (slot string, bytes int64, ok bool)
	})
	if !ok {
		return false
	}
	slot, _, _ := lr.ReplicationLag()
	return slot != ""
}
