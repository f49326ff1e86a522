// Package mapping turns a record of another system into a workspace
// contact's fields and back, from one declaration per field.
//
// A Spec (the `mapping:` block of a connector) names, for each workspace
// target, the record field it comes from, the direction it flows in and
// the transforms applied on the way; Compile checks it and returns a
// Mapper. The way back (contact to record) is derived from the same
// transforms, each of which declares its reverse, so there is no second
// list to keep in step.
//
// Both sides' values are compared in one canonical form (see Fields), so
// that field order, label order or white space never look like a change,
// and a stable hash of them tells syncd whether what it sees is what it
// wrote itself.
//
// First names: the workspace requires one on every contact. When the
// mapped first name is empty, the entries of Spec.FirstNameFallback are
// tried in order: a record field, "default:<value>", "@email" (the local
// part of the first mapped e-mail address, by label) or "@phone" (the
// first mapped phone number). Without a fallback list, ["@email",
// "@phone"] is tried. A record for which none gives a value is refused
// with a RecordError rather than created as "Unknown"; add
// "default:Unknown" to the list to accept such records.
package mapping

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/policy"
)

// Directions of a connector or of a field: policy's, named here too for
// the mapping's callers.
const (
	ToWorkspace = policy.ToWorkspace
	ToCRM       = policy.ToCRM
	Both        = policy.Both
)

// Spec is a connector's mapping as configured.
type Spec struct {
	// ExternalID is the record field whose value becomes the contact's
	// externalId; empty means the record's own ID.
	ExternalID string `yaml:"externalId"`
	// SourceURL is a text/template over the record's fields, as strings
	// ("https://crm.example.com/contacts/{{ .id }}"); empty sets none.
	SourceURL string `yaml:"sourceUrl"`
	// Fields maps workspace targets to their declarations.
	Fields map[string]FieldSpec `yaml:"fields"`
	// FirstNameFallback is tried in order when the first name maps to
	// empty: record fields, "default:<value>", "@email", "@phone". See
	// the package comment for the default.
	FirstNameFallback []string `yaml:"firstNameFallback"`
}

// FieldSpec declares one mapped field. In YAML a plain string is the From
// shorthand; a mapping sets any of from, direction, transform, region.
type FieldSpec struct {
	// From is the record field.
	From string `yaml:"from"`
	// Direction is to-workspace, to-crm or both; empty means the
	// connector's direction. It is kept as written: Compile checks it.
	Direction string `yaml:"direction"`
	// Transform lists the transforms applied from record to contact, in
	// order. In YAML a single string is a list of one.
	Transform []string `yaml:"transform"`
	// Region is the default region of phone numbers (e164 and
	// phoneNumbers.* targets); empty means DefaultRegion.
	Region string `yaml:"region"`
	// Fallback is written into the record field when the contact has no
	// value for it, on the way back (to-crm or both): for a field the
	// other system requires, such as a Salesforce Contact's LastName.
	// Read from the record, the fallback is no value, so it never reaches
	// the workspace. Without it a record that requires the field refuses
	// the write, which becomes a dead letter naming the field.
	Fallback string `yaml:"fallback"`
	// OnInvalid is what a phone number that does not normalise does to
	// its record (phoneNumbers.* targets and fields with the e164
	// transform): OnInvalidSkipField (the default) syncs the record
	// without it and records a field warning; OnInvalidDeadLetter sets
	// the whole record aside as a dead letter.
	OnInvalid string `yaml:"onInvalid"`
}

// The values of FieldSpec.OnInvalid.
const (
	OnInvalidSkipField  = "skip-field"
	OnInvalidDeadLetter = "dead-letter"
)

// fieldSpecKeys are FieldSpec's YAML keys.
var fieldSpecKeys = []string{"from", "direction", "transform", "region", "fallback", "onInvalid"}

// UnmarshalYAML reads the shorthand (a string) or the mapping form, and
// refuses unknown keys.
func (f *FieldSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*f = FieldSpec{From: n.Value}
		return nil
	case yaml.MappingNode:
	default:
		return fmt.Errorf("line %d: a field is a record field name or a mapping of %s", n.Line, strings.Join(fieldSpecKeys, ", "))
	}
	var out FieldSpec
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var err error
		switch k.Value {
		case "from":
			err = v.Decode(&out.From)
		case "direction":
			err = v.Decode(&out.Direction)
		case "region":
			err = v.Decode(&out.Region)
		case "fallback":
			err = v.Decode(&out.Fallback)
		case "onInvalid":
			err = v.Decode(&out.OnInvalid)
		case "transform":
			if v.Kind == yaml.ScalarNode {
				out.Transform = []string{v.Value}
			} else {
				err = v.Decode(&out.Transform)
			}
		default:
			return fmt.Errorf("line %d: unknown key %q (known: %s)", k.Line, k.Value, strings.Join(fieldSpecKeys, ", "))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k.Value, err)
		}
	}
	*f = out
	return nil
}

// Problem is one problem of a Spec, with its path relative to the
// mapping block ("fields.firstName") and a hint on how to fix it.
type Problem struct {
	Path    string
	Message string
	Hint    string
}

func (p Problem) String() string {
	s := p.Message
	if p.Path != "" {
		s = p.Path + ": " + s
	}
	if p.Hint != "" {
		s += "; " + p.Hint
	}
	return s
}

// SpecError lists every problem Compile found.
type SpecError struct {
	Problems []Problem
}

func (e *SpecError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}
