package connector

import "context"

// FieldDescriber is implemented by sources whose fields have display
// names apart from their keys (a CRM's custom fields keyed by hashes), so
// that syncd validate can show each name next to its key.
type FieldDescriber interface {
	// FieldNames returns display names by record field, for the fields
	// that have one.
	FieldNames(ctx context.Context) (map[string]string, error)
}

// WritableFieldLister is implemented by writable sources that can tell
// which of their fields a write may set, so that syncd validate refuses
// a mapping that writes back into a field the other system keeps
// read-only (a computed name, a system field).
type WritableFieldLister interface {
	// WritableFields returns the fields an update may set.
	WritableFields(ctx context.Context) ([]string, error)
}
