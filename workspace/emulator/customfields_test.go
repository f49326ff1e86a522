package emulator_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// documentKind is the JSON kind the published OpenAPI document's contact
// schema gives a custom field value of each type (null aside).
var documentKind = map[string]string{
	workspace.FieldMultiSelect: "array", workspace.FieldAddress: "string", workspace.FieldString: "string",
	workspace.FieldURL: "string", workspace.FieldBoolean: "boolean", workspace.FieldDate: "date-time", workspace.FieldNumber: "number",
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return "array of non-strings"
			}
		}
		return "array"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return "date-time"
		}
		return "string"
	}
	return "other"
}

// checkAnswer checks the customFields of a contact answered as raw JSON
// against the form: in the typed form the document's response schema
// (name, key, type and value required; the value's kind by type), in the
// arrays form the spec's (an array of strings).
func checkAnswer(t *testing.T, where string, contact map[string]any) {
	t.Helper()
	items, _ := contact["customFields"].([]any)
	if len(items) != len(testFields) {
		t.Fatalf("%s: %d custom fields, want %d", where, len(items), len(testFields))
	}
	for _, it := range items {
		f := it.(map[string]any)
		for _, k := range []string{"name", "key", "type", "value", "id"} {
			if _, ok := f[k]; !ok {
				t.Errorf("%s: field %v lacks %s", where, f["key"], k)
			}
		}
		typ, _ := f["type"].(string)
		want := "array"
		if testForm == workspace.ValuesTyped {
			want = documentKind[typ]
		}
		got := jsonKind(f["value"])
		if got == "date-time" && want == "string" {
			got = "string"
		}
		if got != want {
			t.Errorf("%s: %s field %v holds %s %v, want %s", where, typ, f["key"], got, f["value"], want)
		}
	}
}

// TestAnswersFollowTheForm: a contact holding every type is answered, by
// the create, a get and a list page (deliveries carry the same stored
// contact), in the
// emulator's form; and a value of the other form is refused with the
// document's Invalid Custom Field Item.
func TestAnswersFollowTheForm(t *testing.T) {
	s := newServer(t, emulator.Options{})
	var fields []any
	values := map[string][]string{"plan": {"gold"}, "vip": {"true"}, "seats": {"12.5"}, "renewal": {"2026-01-31"},
		"site": {"https://ada.example"}, "tags": {"a", "b"}, "office": {"1 Main St"}}
	for _, d := range testFields {
		fields = append(fields, map[string]any{"key": d.Key, "value": fieldValue(d.Key, values[d.Key]...)})
	}
	r := call(t, s.URL, "POST", "/v1/contacts", person("Ada", map[string]any{"customFields": fields}))
	raw := map[string]map[string]any{}
	if err := json.Unmarshal(r.body, &raw); err != nil || r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	checkAnswer(t, "create", raw["data"])
	id := raw["data"]["id"].(string)

	g := call(t, s.URL, "GET", "/v1/contacts/"+id, nil)
	if err := json.Unmarshal(g.body, &raw); err != nil {
		t.Fatal(err)
	}
	checkAnswer(t, "get", raw["data"])

	var page struct{ Data []map[string]any }
	if err := json.Unmarshal(call(t, s.URL, "GET", "/v1/contacts?maxResults=50", nil).body, &page); err != nil || len(page.Data) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	checkAnswer(t, "list", page.Data[0])

	// The other form's boolean is refused, with the document's body.
	other := any(true)
	if testForm == workspace.ValuesTyped {
		other = []string{"true"}
	}
	r = call(t, s.URL, "PATCH", "/v1/contacts/"+id, map[string]any{"customFields": []any{map[string]any{"key": "vip", "value": other}}})
	eb := errorBody(t, r, http.StatusBadRequest)
	if eb.Title != "Invalid Custom Field Item" || eb.Description != "Invalid Custom Field Item" || !strings.HasSuffix(eb.Code, "01400") ||
		len(eb.Errors) != 1 || eb.Errors[0].Path != "/customFields/0/value" {
		t.Fatalf("the other form: %s", r.body)
	}
	// Null clears in the typed form; [] in the arrays form.
	clear := fieldValue("vip")
	c := data[workspace.Contact](t, call(t, s.URL, "PATCH", "/v1/contacts/"+id, map[string]any{"customFields": []any{map[string]any{"key": "vip", "value": clear}}}), http.StatusOK)
	if _, held := fieldTexts(c)["vip"]; held {
		t.Errorf("vip not cleared by %v", clear)
	}
}
