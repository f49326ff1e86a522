// Package sqlkit holds what the SQL connectors (connector/postgres,
// connector/mysql) share, so that each dialect keeps only what differs:
// its driver, catalog queries, SQL text and type conversions.
//
// Shared here: the keyset position and its checkpoint form, the paging
// loops of Changes (with the lookback bound) and Snapshot, picking the
// columns a table's settings name, the common settings checks, the write
// loop (a transaction for several changes, each change alone when that
// fails), record values in text form, and removing secrets from errors.
package sqlkit

import (
	"encoding/json"
	"fmt"
)

// Position is a place in the (cursor, id) order of a table. With ID nil
// it stands before every row whose cursor is U or later; otherwise just
// after the row (U, ID). Both are in their columns' text form.
type Position struct {
	U  string  `json:"u"`
	ID *string `json:"id,omitempty"`
}

// String is the checkpoint form of the position.
func (p Position) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// ParseCheckpoint reads a checkpoint written by Position.String; the
// empty checkpoint is nil, the start of the table.
func ParseCheckpoint(checkpoint string) (*Position, error) {
	if checkpoint == "" {
		return nil, nil
	}
	var p Position
	if err := json.Unmarshal([]byte(checkpoint), &p); err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
	}
	return &p, nil
}
