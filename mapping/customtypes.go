package mapping

import "github.com/syncd-io/syncd/workspace"

// CustomFieldTypes tells the type of a workspace custom field by its key,
// "" when unknown; the workspace client is one, once it has loaded the
// definitions.
type CustomFieldTypes interface {
	CustomFieldType(key string) string
}

// SetCustomFieldTypes makes the mapper read custom field values by their
// field's type (workspace.CanonicalText): a boolean, number or date that
// does not parse is a record error naming the field, and equal data
// compares and hashes equal whichever form carried it (true and
// ["true"]). Without it, or for a key it does not know, values compare as
// text. Call it before the mapper is used.
func (m *Mapper) SetCustomFieldTypes(t CustomFieldTypes) { m.types = t }

// canonical is the package's canonical, with custom field values read by
// their field's type.
func (m *Mapper) canonical(t target, v value, region string) (string, error) {
	if t.kind != kindCustom || m.types == nil {
		return canonical(t, v, region)
	}
	vals, err := workspace.CanonicalText(m.types.CustomFieldType(t.label), v.each())
	if err != nil {
		return "", err
	}
	return canonicalMulti(vals), nil
}
