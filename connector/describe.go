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
