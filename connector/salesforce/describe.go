package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// description is what the connector keeps of the object's describe.
type description struct {
	names    []string            // every field's API name
	byLower  map[string]describe // by lower-case name
	required []string            // fields a create must set
}

type describe struct {
	Name              string `json:"name"`
	Type              string `json:"type"`
	Nillable          bool   `json:"nillable"`
	Createable        bool   `json:"createable"`
	Updateable        bool   `json:"updateable"`
	DefaultedOnCreate bool   `json:"defaultedOnCreate"`
}

// describeObject reads the object's describe, once per Source.
func (s *Source) describeObject(ctx context.Context) (*description, error) {
	s.descMu.Lock()
	defer s.descMu.Unlock()
	if s.desc != nil {
		return s.desc, nil
	}
	var ans struct {
		Fields []describe `json:"fields"`
	}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/sobjects/" + s.object + "/describe"}, &ans); err != nil {
		return nil, fmt.Errorf("describe %s: %w", s.object, err)
	}
	d := &description{byLower: map[string]describe{}}
	for _, f := range ans.Fields {
		d.names = append(d.names, f.Name)
		d.byLower[strings.ToLower(f.Name)] = f
		// Salesforce's rule for a required field: createable, not
		// nillable and not defaulted on create.
		if f.Createable && !f.Nillable && !f.DefaultedOnCreate {
			d.required = append(d.required, f.Name)
		}
	}
	sort.Strings(d.names)
	s.desc = d
	return d, nil
}

// Fields lists the object's field API names (describe), for `syncd
// validate`.
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	d, err := s.describeObject(ctx)
	if err != nil {
		return nil, err
	}
	// The mapping may spell a field in another case (API names are
	// case-insensitive): list it as the mapping spells it too.
	out := append([]string(nil), d.names...)
	for _, f := range s.fields {
		if c, ok := d.byLower[strings.ToLower(f)]; ok && c.Name != f {
			out = append(out, f)
		}
	}
	return out, nil
}

// WritableFields lists the object's fields an update may set
// (updateable in the describe), for `syncd validate`; a mapping's
// spelling of one in another case is listed too.
func (s *Source) WritableFields(ctx context.Context) ([]string, error) {
	d, err := s.describeObject(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range d.byLower {
		if f.Updateable {
			out = append(out, f.Name)
		}
	}
	for _, f := range s.fields {
		if c, ok := d.byLower[strings.ToLower(f)]; ok && c.Updateable && c.Name != f {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}
