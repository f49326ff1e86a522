package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
)

var everyType = []CustomFieldDefinition{
	{Name: "Office", Key: "office", Type: FieldAddress}, {Name: "VIP", Key: "vip", Type: FieldBoolean},
	{Name: "Renewal", Key: "renewal", Type: FieldDate}, {Name: "Tags", Key: "tags", Type: FieldMultiSelect},
	{Name: "Seats", Key: "seats", Type: FieldNumber}, {Name: "Plan", Key: "plan", Type: FieldString},
	{Name: "Site", Key: "site", Type: FieldURL},
}

// sentFields returns the custom field values of a recorded request body,
// raw, by key.
func sentFields(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var b struct {
		CustomFields []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"customFields"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range b.CustomFields {
		out[f.Key] = string(f.Value)
	}
	return out
}

// TestClientWritesEachForm: once the definitions are loaded, the client
// sends the text of each value in its form for the field's type, and a
// clear as null (typed) or [] (arrays).
func TestClientWritesEachForm(t *testing.T) {
	text := map[string][]string{"office": {"1 Main St"}, "vip": {"true"}, "renewal": {"2023-01-02"},
		"tags": {"a", "b"}, "seats": {"43"}, "plan": {"gold"}, "site": {"https://a.example"}}
	want := map[string]map[string]string{
		ValuesTyped: {"office": `"1 Main St"`, "vip": `true`, "renewal": `"2023-01-02T00:00:00.000Z"`,
			"tags": `["a","b"]`, "seats": `43`, "plan": `"gold"`, "site": `"https://a.example"`},
		ValuesArrays: {"office": `["1 Main St"]`, "vip": `["true"]`, "renewal": `["2023-01-02T00:00:00.000Z"]`,
			"tags": `["a","b"]`, "seats": `["43"]`, "plan": `["gold"]`, "site": `["https://a.example"]`},
	}
	wantClear := map[string]string{ValuesTyped: "null", ValuesArrays: "[]"}
	for _, form := range []string{ValuesTyped, ValuesArrays} {
		t.Run(form, func(t *testing.T) {
			routes := allRoutes()
			routes[RouteCustomFields] = func(w http.ResponseWriter, r *http.Request) { writeData(w, http.StatusOK, everyType) }
			f := newFakeAPI(t, routes)
			opts := testClientOptions(t, f.URL)
			opts.CustomFieldValues = form
			c := newTestClient(t, opts)
			if _, err := c.LoadCustomFields(context.Background()); err != nil {
				t.Fatal(err)
			}
			in := ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}}
			for _, d := range everyType {
				in.CustomFields = append(in.CustomFields, CustomFieldValue{Key: d.Key, Value: ListValue(text[d.Key])})
			}
			if _, err := c.CreateContact(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			patch := ContactPatch{CustomFields: []CustomFieldValue{{Key: "vip", Value: NullValue()}, {Key: "tags", Value: NullValue()}}}
			if _, err := c.UpdateContact(context.Background(), "c_1", patch); err != nil {
				t.Fatal(err)
			}
			reqs := f.Requests()
			if got := sentFields(t, reqs[1].Body); !reflect.DeepEqual(got, want[form]) {
				t.Errorf("create sent %v, want %v", got, want[form])
			}
			clear := map[string]string{"vip": wantClear[form], "tags": wantClear[form]}
			if got := sentFields(t, reqs[2].Body); !reflect.DeepEqual(got, clear) {
				t.Errorf("clearing sent %v, want %v", got, clear)
			}
			if in.CustomFields[1].Value.Kind() != "array" {
				t.Error("the caller's request was changed")
			}
		})
	}
}

// TestClientRefusesValueThatDoesNotFit: a value that does not parse for
// its field's type is the record's error, raised before any call.
func TestClientRefusesValueThatDoesNotFit(t *testing.T) {
	routes := allRoutes()
	routes[RouteCustomFields] = func(w http.ResponseWriter, r *http.Request) { writeData(w, http.StatusOK, everyType) }
	f := newFakeAPI(t, routes)
	c := newTestClient(t, testClientOptions(t, f.URL))
	if _, err := c.LoadCustomFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateContact(context.Background(), ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"},
		CustomFields: []CustomFieldValue{{Key: "seats", Value: ListValue([]string{"many"})}}})
	var fe *FieldValueError
	if !errors.As(err, &fe) || fe.Key != "seats" || fe.Type != FieldNumber || !errors.Is(err, ErrNotNumber) || !IsValidation(err) || IsTransient(err) {
		t.Fatalf("err = %v, want a FieldValueError on seats (number), a validation error", err)
	}
	if n := f.Hits(RouteCreateContact); n != 0 {
		t.Errorf("%d creates sent for a value that does not fit", n)
	}
}

// TestClientReloadsDefinitionsOnRefusal: a 400 naming a custom field
// reloads the definitions; when the field's type changed (made a number
// in the app), the create is sent once more in the new form.
func TestClientReloadsDefinitionsOnRefusal(t *testing.T) {
	asString := []CustomFieldDefinition{{Name: "Seats", Key: "seats", Type: FieldString}}
	asNumber := []CustomFieldDefinition{{Name: "Seats", Key: "seats", Type: FieldNumber}}
	routes := allRoutes()
	routes[RouteCustomFields] = sequence(
		func(w http.ResponseWriter, r *http.Request) { writeData(w, http.StatusOK, asString) },
		func(w http.ResponseWriter, r *http.Request) { writeData(w, http.StatusOK, asNumber) })
	refuse := func(w http.ResponseWriter) {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Message: "/customFields/0/value: Expected number", Code: "0801400", Status: 400,
			Title: "Invalid Custom Field Item", Description: "Invalid Custom Field Item",
			Errors: []FieldError{{Path: "/customFields/0/value", Message: "Expected number", Schema: map[string]any{"type": "number"}}}})
	}
	routes[RouteCreateContact] = func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			CustomFields []struct{ Value any } `json:"customFields"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		if _, isNumber := b.CustomFields[0].Value.(float64); !isNumber {
			refuse(w)
			return
		}
		writeData(w, http.StatusCreated, Contact{ID: "c_new"})
	}
	routes[RouteUpdateContact] = func(w http.ResponseWriter, r *http.Request) { refuse(w) }
	f := newFakeAPI(t, routes)
	c := newTestClient(t, testClientOptions(t, f.URL))
	c.fields.reloadEvery = 0
	if _, err := c.LoadCustomFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	ct, err := c.CreateContact(context.Background(), ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"},
		CustomFields: []CustomFieldValue{{Key: "seats", Value: ListValue([]string{"12"})}}})
	if err != nil || ct.ID != "c_new" {
		t.Fatalf("create: %v, %v; want it created after the reload", ct, err)
	}
	if d, cr := f.Hits(RouteCustomFields), f.Hits(RouteCreateContact); d != 2 || cr != 2 || c.CustomFieldType("seats") != FieldNumber {
		t.Fatalf("%d definition reads, %d creates; want 2 and 2", d, cr)
	}

	// A refusal that changes no type is returned as it is, after one
	// reload and without sending the update again.
	_, err = c.UpdateContact(context.Background(), "c_1", ContactPatch{CustomFields: []CustomFieldValue{{Key: "seats", Value: ListValue([]string{"3"})}}})
	if !IsValidation(err) {
		t.Fatalf("refused update: %v, want the refusal", err)
	}
	if d, up := f.Hits(RouteCustomFields), f.Hits(RouteUpdateContact); d != 3 || up != 1 {
		t.Errorf("%d definition reads, %d updates; want 3 and 1", d, up)
	}
}
