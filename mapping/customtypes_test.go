package mapping

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

type typeMap map[string]string

func (m typeMap) CustomFieldType(key string) string { return m[key] }

func typedMapper(t *testing.T) *Mapper {
	t.Helper()
	m, err := Compile(Spec{Fields: map[string]FieldSpec{
		"firstName":    {From: "name"},
		"custom.vip":   {From: "vip"},
		"custom.score": {From: "score"},
		"custom.since": {From: "since"},
		"custom.plan":  {From: "plan"},
		"custom.tags":  {From: "tags", Transform: []string{"split:;"}},
	}}, Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.SetCustomFieldTypes(typeMap{"vip": workspace.FieldBoolean, "score": workspace.FieldNumber,
		"since": workspace.FieldDate, "plan": workspace.FieldString, "tags": workspace.FieldMultiSelect})
	return m
}

// TestTypedValuesHashEqual: a record's text and the contact's values, in
// either form, give the same Fields and hash, so that a value syncd wrote
// reads back as unchanged (no write, no echo).
func TestTypedValuesHashEqual(t *testing.T) {
	m := typedMapper(t)
	mapped, err := m.ToContact(connector.Record{ID: "1", Fields: map[string]any{"name": "Ann", "vip": "TRUE",
		"score": "43.0", "since": "2023-01-02", "plan": " gold ", "tags": "b;a"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Fields{"firstName": "Ann", "custom.vip": "true", "custom.score": "43", "custom.since": "2023-01-02",
		"custom.plan": "gold", "custom.tags": "a\x1fb"}
	if !mapped.Fields.Equal(want) {
		t.Fatalf("ToContact = %q, want %q", mapped.Fields, want)
	}
	for name, fields := range map[string]string{
		"typed":  `[{"key":"vip","value":true},{"key":"score","value":43},{"key":"since","value":"2023-01-02T00:00:00.000Z"},{"key":"plan","value":"gold"},{"key":"tags","value":["a","b"]}]`,
		"arrays": `[{"key":"vip","value":["true"]},{"key":"score","value":["43"]},{"key":"since","value":["2023-01-02T00:00:00.000Z"]},{"key":"plan","value":["gold"]},{"key":"tags","value":["b","a"]}]`,
	} {
		var c workspace.Contact
		if err := json.Unmarshal([]byte(`{"id":"c","defaultFields":{"firstName":"Ann"},"customFields":`+fields+`}`), &c); err != nil {
			t.Fatal(err)
		}
		if got := m.FromContact(c); got.Hash() != mapped.Fields.Hash() {
			t.Errorf("%s contact reads %q, want %q (equal hashes)", name, got, mapped.Fields)
		}
	}
}

// TestTypedValueRecordErrors: a value that does not parse for its field's
// type fails the record, naming the target and the record field.
func TestTypedValueRecordErrors(t *testing.T) {
	m := typedMapper(t)
	for _, tt := range []struct{ field, value, target string }{
		{"score", "forty", "custom.score"},
		{"vip", "perhaps", "custom.vip"},
		{"since", "next week", "custom.since"},
	} {
		_, err := m.ToContact(connector.Record{ID: "7", Fields: map[string]any{"name": "Ann", tt.field: tt.value}})
		var re *RecordError
		if !errors.As(err, &re) || re.Field != tt.target || re.From != tt.field || !strings.Contains(err.Error(), tt.value) {
			t.Errorf("%s=%q: err %v, want a RecordError on %s from %s quoting the value", tt.field, tt.value, err, tt.target, tt.field)
		}
	}
}
