package hubspotemu

import (
	"strings"
	"testing"
)

func TestSeedRefusesWhatAddPanicsOn(t *testing.T) {
	s := NewServer(Options{Properties: []string{"favourite_language"}})
	defer s.Close()
	tests := []struct {
		name, wantErr string
		props         map[string]string
	}{
		{"standard and account properties", "", map[string]string{"firstname": "Grace", "favourite_language": "COBOL"}},
		{"a computed property", `"hs_object_id" is read-only`, map[string]string{"hs_object_id": "1"}},
		{"a property the account lacks", `"shoe_size" is not one of the account's`, map[string]string{"shoe_size": "42"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Contacts())
			id, err := s.Seed(tt.props)
			if tt.wantErr == "" {
				if c, ok := s.Contact(id); err != nil || !ok || c.Properties["firstname"] != "Grace" {
					t.Fatalf("Seed = %q, %v; contact %+v", id, err, c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if len(s.Contacts()) != before {
				t.Error("a refused record was stored")
			}
		})
	}
}
