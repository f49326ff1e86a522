package mapping

import (
	"fmt"
	"strings"
)

// FieldSource is one record field the mapping reads, with the path of its
// declaration relative to the mapping ("fields.firstName", "externalId",
// "sourceUrl", "firstNameFallback[0]").
type FieldSource struct {
	Path  string
	Field string
}

// FieldSources lists every record field the mapping reads, where it is
// declared, so that a field the source does not have can be reported at
// the line that names it.
func (m *Mapper) FieldSources() []FieldSource {
	var out []FieldSource
	if m.externalID != "" {
		out = append(out, FieldSource{Path: "externalId", Field: m.externalID})
	}
	for _, s := range m.sourceFields {
		out = append(out, FieldSource{Path: "sourceUrl", Field: s})
	}
	for _, f := range m.fields {
		out = append(out, FieldSource{Path: "fields." + f.target.key, Field: f.from})
	}
	for i, e := range m.fallback {
		if e != "" && !strings.HasPrefix(e, "@") && !strings.HasPrefix(e, "default:") {
			out = append(out, FieldSource{Path: fmt.Sprintf("firstNameFallback[%d]", i), Field: e})
		}
	}
	return out
}

// SourceOf returns the record field target is read from, "" when the
// mapping reads it from none.
func (m *Mapper) SourceOf(target string) string {
	for _, f := range m.fields {
		if f.target.key == target {
			return f.from
		}
	}
	return ""
}
