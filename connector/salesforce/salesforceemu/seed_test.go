package salesforceemu

import (
	"strings"
	"testing"
)

func TestSeedRefusesWhatAddPanicsOn(t *testing.T) {
	s := NewServer(Options{CustomFields: []string{"Language__c"}})
	defer s.Close()
	tests := []struct {
		name, object, wantErr string
		fields                map[string]any
	}{
		{"standard and custom fields", "Contact", "", map[string]any{"LastName": "Hopper", "Language__c": "COBOL"}},
		{"an unknown object", "Account", `no object "Account"`, map[string]any{"Name": "Navy"}},
		{"a field the object lacks", "Contact", `Contact has no field "ShoeSize"`, map[string]any{"LastName": "Hopper", "ShoeSize": 42}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Records("Contact"))
			id, err := s.Seed(tt.object, tt.fields)
			if tt.wantErr == "" {
				if r, ok := s.Get(id); err != nil || !ok || r.Fields["Language__c"] != "COBOL" {
					t.Fatalf("Seed = %q, %v; record %+v", id, err, r)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if len(s.Records("Contact")) != before {
				t.Error("a refused record was stored")
			}
		})
	}
}
