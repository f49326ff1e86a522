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
