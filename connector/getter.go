package connector

import "context"

// Getter is implemented by writable connectors that can read records by
// their IDs. The reverse direction reads the records a workspace change
// is about before writing it back: to see whether the record changed too
// since the last sync (a conflict), and to write only the fields that
// differ from what the record holds.
type Getter interface {
	// Get returns the records with the given IDs that exist, in any
	// order; IDs without a record are left out (no error). Soft-deleted
	// records come back with Deleted set.
	Get(ctx context.Context, ids []string) ([]Record, error)
}
