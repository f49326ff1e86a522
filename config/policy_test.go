package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
)

// A connector's policies decode through their UnmarshalText: a value
// they refuse is one problem naming the key and the allowed values.
func TestPolicyValues(t *testing.T) {
	tests := []struct {
		name      string
		key, val  string
		wantPath  string // of the one problem; "" means valid
		wantMsg   string
		wantHint  string
		wantCheck func(cc ConnectorConfig) bool
	}{
		{name: "direction both", key: "direction", val: "both", wantCheck: func(cc ConnectorConfig) bool { return cc.Direction == policy.Both }},
		{name: "conflict crm-wins", key: "conflict", val: "crm-wins", wantCheck: func(cc ConnectorConfig) bool { return cc.Conflict == policy.CRMWins }},
		{name: "onSourceDelete unlink", key: "onSourceDelete", val: "unlink", wantCheck: func(cc ConnectorConfig) bool { return cc.OnSourceDelete == policy.DeleteUnlink }},
		{name: "onMatch link", key: "onMatch", val: "link", wantCheck: func(cc ConnectorConfig) bool { return cc.OnMatch == policy.MatchLink }},
		{name: "onAmbiguous create", key: "onAmbiguous", val: "create", wantCheck: func(cc ConnectorConfig) bool { return cc.OnAmbiguous == policy.AmbiguousCreate }},
		{name: "bad direction", key: "direction", val: "two-way", wantPath: "connectors[crm].direction",
			wantMsg: `unknown value "two-way"`, wantHint: "use one of: to-workspace, to-crm, both"},
		{name: "bad conflict", key: "conflict", val: "last-wins", wantPath: "connectors[crm].conflict",
			wantMsg: `unknown value "last-wins"`, wantHint: "use one of: newest-wins, workspace-wins, crm-wins"},
		{name: "bad onWorkspaceDelete", key: "onWorkspaceDelete", val: "Delete", wantPath: "connectors[crm].onWorkspaceDelete",
			wantMsg: `unknown value "Delete"`, wantHint: "use one of: ignore, unlink, delete"},
		{name: "bad onWorkspaceCreate", key: "onWorkspaceCreate", val: `"yes"`, wantPath: "connectors[crm].onWorkspaceCreate",
			wantMsg: `unknown value "yes"`, wantHint: "use one of: ignore, create"},
		{name: "policy as a list", key: "onAmbiguous", val: "[hold]", wantPath: "connectors[crm].onAmbiguous",
			wantMsg: "expected a string, got a list", wantHint: "write a single value on the key's line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `
workspace: {baseURL: "https://api.example.com", apiKey: k}
connectors:
  - name: crm
    type: dbtest
    ` + tt.key + `: ` + tt.val + `
    settings: {table: t}
    mapping: {fields: {firstName: n}}
`
			c, err := ParseConfig([]byte(doc), nil)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !tt.wantCheck(c.Connectors[0]) {
					t.Errorf("decoded %+v", c.Connectors[0])
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			if p := ve.Problems[0]; p.Path != tt.wantPath || p.Message != tt.wantMsg || p.Hint != tt.wantHint {
				t.Errorf("problem = %+v, want %s: %s; %s", p, tt.wantPath, tt.wantMsg, tt.wantHint)
			}
		})
	}
}

// A configuration built in Go, not decoded, is checked too.
func TestValidateProgrammaticPolicy(t *testing.T) {
	c := DefaultConfig()
	c.Workspace.BaseURL, c.Workspace.APIKey = "https://api.example.com", "k"
	cc := DefaultConnector()
	cc.Name, cc.Type, cc.Source, cc.Conflict = "crm", "dbtest", "custom-crm", "oldest-wins"
	cc.Mapping = mapping.Spec{Fields: map[string]mapping.FieldSpec{"firstName": {From: "n"}}}
	cc.Settings = &dbSettings{Table: "t"}
	c.Connectors = []ConnectorConfig{cc}
	var ve *ValidationError
	if err := c.Validate(); !errors.As(err, &ve) || len(ve.Problems) != 1 ||
		ve.Problems[0].Path != "connectors[crm].conflict" || ve.Problems[0].Message != `unknown value "oldest-wins"` {
		t.Errorf("Validate = %v, want the conflict named", err)
	}
}

// A phone field's onInvalid is checked with the mapping: a bad value is
// named with its path.
func TestOnInvalidValues(t *testing.T) {
	tests := []struct {
		name, field string
		wantPath    string // of the one problem; "" means valid
		wantMsg     string
	}{
		{name: "skip-field", field: "{from: m, onInvalid: skip-field}"},
		{name: "dead-letter", field: "{from: m, onInvalid: dead-letter}"},
		{name: "unknown value", field: "{from: m, onInvalid: drop}", wantPath: "connectors[crm].mapping.fields.phoneNumbers.mobile.onInvalid", wantMsg: `unknown value "drop"`},
		{name: "old spelling", field: "{from: m, onInvalid: deadletter}", wantPath: "connectors[crm].mapping.fields.phoneNumbers.mobile.onInvalid", wantMsg: `unknown value "deadletter"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `
workspace: {baseURL: "https://api.example.com", apiKey: k}
connectors:
  - name: crm
    type: dbtest
    settings: {table: t}
    mapping: {fields: {firstName: n, phoneNumbers.mobile: ` + tt.field + `}}
`
			_, err := ParseConfig([]byte(doc), nil)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			if p := ve.Problems[0]; p.Path != tt.wantPath || p.Message != tt.wantMsg || !strings.Contains(p.Hint, "skip-field") {
				t.Errorf("problem = %+v, want %s: %s with a hint naming the values", p, tt.wantPath, tt.wantMsg)
			}
		})
	}
}
