package mapping

import (
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

func TestFallbackFillsRequiredRecordFieldsOnTheWayBack(t *testing.T) {
	m, err := Compile(Spec{Fields: map[string]FieldSpec{
		"firstName": {From: "FirstName"},
		"lastName":  {From: "LastName", Fallback: "(no last name)"},
	}}, Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := m.ToRecord(Fields{"firstName": "Ada"})
	if err != nil || rec["LastName"] != "(no last name)" || rec["FirstName"] != "Ada" {
		t.Fatalf("ToRecord of a contact without a last name = %v, %v", rec, err)
	}
	ch, err := m.RecordChanges(Fields{"firstName": "Ada", "lastName": "Lovelace"}, Fields{"firstName": "Ada"})
	if err != nil || ch["LastName"] != "(no last name)" {
		t.Fatalf("RecordChanges clearing the last name = %v, %v", ch, err)
	}
	// Read back, the stand-in is no value: the workspace never sees it,
	// and the link's values (no last name) match.
	got, err := m.ToContact(connector.Record{ID: "1", Fields: map[string]any{"FirstName": "Ada", "LastName": "(no last name)"}})
	if err != nil || got.Fields["lastName"] != "" {
		t.Fatalf("ToContact of the stand-in = %v, %v", got.Fields, err)
	}
	got, _ = m.ToContact(connector.Record{ID: "1", Fields: map[string]any{"FirstName": "Ada", "LastName": "Byron"}})
	if got.Fields["lastName"] != "Byron" {
		t.Errorf("a real last name reads as %q", got.Fields["lastName"])
	}
}

func TestFallbackProblems(t *testing.T) {
	_, err := Compile(Spec{Fields: map[string]FieldSpec{
		"firstName": {From: "FirstName"},
		"lastName":  {From: "LastName", Direction: "to-workspace", Fallback: "x"},
	}}, Both, nil)
	var se *SpecError
	if !errors.As(err, &se) || len(se.Problems) != 1 || se.Problems[0].Path != "fields.lastName" || !strings.Contains(se.Problems[0].Message, "fallback applies to the way back") {
		t.Fatalf("Compile = %v", err)
	}
}
