package hubspotemu

import "fmt"

// Seed creates a contact with props as Add does, but answers an error for
// a property the account does not have or the server computes, instead of
// panicking: the records `syncd emulator --crm hubspot --records` loads
// come from a user's file, not from a test.
func (s *Server) Seed(props map[string]string) (string, error) {
	s.mu.Lock()
	for k := range props {
		if readOnlyProperties[k] {
			s.mu.Unlock()
			return "", fmt.Errorf("property %q is read-only: HubSpot computes it", k)
		}
		if !s.props[k] {
			s.mu.Unlock()
			return "", fmt.Errorf("property %q is not one of the account's contact properties", k)
		}
	}
	s.mu.Unlock()
	return s.Add(props), nil
}
