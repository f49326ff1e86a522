package connector

import (
	"encoding/json"
	"fmt"
)

// DecodeCheckpoint decodes a checkpoint that a connector of typeName
// stored as JSON (EncodeCheckpoint) into a C. "", the start of the
// source, gives C's zero value. What a checkpoint's fields may hold is the
// connector's to check.
func DecodeCheckpoint[C any](typeName, checkpoint string) (C, error) {
	var cp C
	if checkpoint == "" {
		return cp, nil
	}
	if err := json.Unmarshal([]byte(checkpoint), &cp); err != nil {
		return cp, fmt.Errorf("parse %s checkpoint %q: %w", typeName, checkpoint, err)
	}
	return cp, nil
}

// EncodeCheckpoint returns a connector's checkpoint as compact JSON. cp is
// plain data (numbers, strings, times of years 0 to 9999, maps and structs
// of them), whose encoding cannot fail; it panics if it does.
func EncodeCheckpoint(cp any) string {
	b, err := json.Marshal(cp)
	if err != nil {
		panic(fmt.Sprintf("encode checkpoint: %v", err))
	}
	return string(b)
}
