package salesforceemu

import (
	"fmt"
	"strings"
)

// Seed creates a record as Add does, but answers an error for an unknown
// object or field instead of panicking: the records `syncd emulator --crm
// salesforce --records` loads come from a user's file, not from a test.
func (s *Server) Seed(objectName string, fields map[string]any) (string, error) {
	s.mu.Lock()
	o := s.objects[strings.ToLower(objectName)]
	if o == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("no object %q: the org has Contact and Lead", objectName)
	}
	for k := range fields {
		if _, ok := o.fields[strings.ToLower(k)]; !ok {
			s.mu.Unlock()
			return "", fmt.Errorf("%s has no field %q (custom fields end in __c)", o.name, k)
		}
	}
	s.mu.Unlock()
	return s.Add(objectName, fields), nil
}
