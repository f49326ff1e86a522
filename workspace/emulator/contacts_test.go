package emulator_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func TestCreateContactValidation(t *testing.T) {
	s := newServer(t, emulator.Options{})
	long := func(n int) string { return strings.Repeat("x", n) }
	df := func(kv ...any) map[string]any {
		m := map[string]any{"firstName": "Ada"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	item := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	cf := func(key string, vals ...string) map[string]any {
		return map[string]any{"key": key, "value": fieldValue(key, vals...)}
	}
	tests := []struct {
		name      string
		body      any
		wantPaths []string // nil: created
		wantMsg   string   // substring of the first errors[].message
	}{
		{name: "minimal", body: person("Ada", nil)},
		{name: "every field", body: map[string]any{
			"defaultFields": df("lastName", "Lovelace", "company", "Engines", "role", "Analyst",
				"emails", []any{item("work", "ada@example.com")}, "phoneNumbers", []any{item("mobile", "+14155550100")}),
			"customFields":    []any{cf("plan", "gold"), cf("vip", "true"), cf("seats", "12.5"), cf("renewal", "2026-01-31"), cf("site", "https://ada.example"), cf("tags", "a", "b"), cf("office", "1 Main St")},
			"createdByUserId": "US123", "source": "custom-hubspot", "sourceUrl": "https://crm.example.com/contacts/1", "externalId": "hs-1",
		}},
		{name: "null externalId", body: person("Ada", map[string]any{"externalId": nil})},
		{name: "externalId of 75", body: person("Ada", map[string]any{"externalId": long(75)})},
		{name: "source of 72", body: person("Ada", map[string]any{"source": long(72)})},
		{name: "sourceUrl of 200", body: person("Ada", map[string]any{"sourceUrl": "https://x.example/" + long(200-len("https://x.example/"))})},

		{name: "no defaultFields", body: map[string]any{}, wantPaths: []string{"/defaultFields"}, wantMsg: "Expected required property"},
		{name: "no firstName", body: map[string]any{"defaultFields": map[string]any{"lastName": "L"}}, wantPaths: []string{"/defaultFields/firstName"}, wantMsg: "Expected required property"},
		{name: "empty firstName", body: person("", nil), wantPaths: []string{"/defaultFields/firstName"}, wantMsg: "Expected string length greater or equal to 1"},
		{name: "firstName not a string", body: map[string]any{"defaultFields": map[string]any{"firstName": 5}}, wantPaths: []string{"/defaultFields/firstName"}, wantMsg: "Expected string"},
		{name: "externalId of 76", body: person("Ada", map[string]any{"externalId": long(76)}), wantPaths: []string{"/externalId"}, wantMsg: "Expected string length less or equal to 75"},
		{name: "empty externalId", body: person("Ada", map[string]any{"externalId": ""}), wantPaths: []string{"/externalId"}, wantMsg: "greater or equal to 1"},
		{name: "source of 73", body: person("Ada", map[string]any{"source": long(73)}), wantPaths: []string{"/source"}, wantMsg: "less or equal to 72"},
		{name: "empty source", body: person("Ada", map[string]any{"source": ""}), wantPaths: []string{"/source"}},
		{name: "reserved source device", body: person("Ada", map[string]any{"source": "device"}), wantPaths: []string{"/source"}, wantMsg: "reserved"},
		{name: "reserved source csv", body: person("Ada", map[string]any{"source": "csv"}), wantPaths: []string{"/source"}},
		{name: "reserved source other", body: person("Ada", map[string]any{"source": "other"}), wantPaths: []string{"/source"}},
		{name: "reserved source service name", body: person("Ada", map[string]any{"source": emulator.ServiceName}), wantPaths: []string{"/source"}},
		{name: "reserved source zapier", body: person("Ada", map[string]any{"source": "zapier"}), wantPaths: []string{"/source"}},
		{name: "reserved source google-people", body: person("Ada", map[string]any{"source": "google-people"}), wantPaths: []string{"/source"}},
		{name: "reserved source in capitals", body: person("Ada", map[string]any{"source": "CSV"}), wantPaths: []string{"/source"}},
		{name: "reserved prefix service name", body: person("Ada", map[string]any{"source": emulator.ServiceName + "-sync"}), wantPaths: []string{"/source"}, wantMsg: "start with"},
		{name: "reserved prefix csv", body: person("Ada", map[string]any{"source": "csv-import"}), wantPaths: []string{"/source"}, wantMsg: "start with 'csv'"},
		{name: "sourceUrl not a URI", body: person("Ada", map[string]any{"sourceUrl": "not a url"}), wantPaths: []string{"/sourceUrl"}, wantMsg: "'uri' format"},
		{name: "sourceUrl relative", body: person("Ada", map[string]any{"sourceUrl": "/contacts/1"}), wantPaths: []string{"/sourceUrl"}},
		{name: "sourceUrl of 201", body: person("Ada", map[string]any{"sourceUrl": "https://x.example/" + long(201-len("https://x.example/"))}), wantPaths: []string{"/sourceUrl"}, wantMsg: "less or equal to 200"},
		{name: "bad email", body: map[string]any{"defaultFields": df("emails", []any{item("work", "ada")})}, wantPaths: []string{"/defaultFields/emails/0/value"}, wantMsg: "'email' format"},
		{name: "email with display name", body: map[string]any{"defaultFields": df("emails", []any{item("work", "Ada <ada@example.com>")})}, wantPaths: []string{"/defaultFields/emails/0/value"}},
		{name: "email item without value", body: map[string]any{"defaultFields": df("emails", []any{map[string]any{"name": "work"}})}, wantPaths: []string{"/defaultFields/emails/0/value"}, wantMsg: "Expected required property"},
		{name: "email item with id on create", body: map[string]any{"defaultFields": df("emails", []any{map[string]any{"id": "IT1", "name": "w", "value": "a@example.com"}})}, wantPaths: []string{"/defaultFields/emails/0/id"}, wantMsg: "Unexpected property"},
		{name: "phone not E.164", body: map[string]any{"defaultFields": df("phoneNumbers", []any{item("mobile", "415-555-0100")})}, wantPaths: []string{"/defaultFields/phoneNumbers/0/value"}, wantMsg: `Expected string to match '^\+[1-9]\d{1,14}$'`},
		{name: "phone with leading zero", body: map[string]any{"defaultFields": df("phoneNumbers", []any{item("mobile", "+0415555")})}, wantPaths: []string{"/defaultFields/phoneNumbers/0/value"}},
		{name: "phone too long", body: map[string]any{"defaultFields": df("phoneNumbers", []any{item("mobile", "+1234567890123456")})}, wantPaths: []string{"/defaultFields/phoneNumbers/0/value"}},
		{name: "unknown property", body: person("Ada", map[string]any{"nickname": "A"}), wantPaths: []string{"/nickname"}, wantMsg: "Unexpected property"},
		{name: "unknown nested property", body: map[string]any{"defaultFields": df("middleName", "B")}, wantPaths: []string{"/defaultFields/middleName"}},
		{name: "unknown custom field key", body: person("Ada", map[string]any{"customFields": []any{cf("shoe", "42")}}), wantPaths: []string{"/customFields/0/key"}, wantMsg: "defined custom field"},
		{name: "boolean field not true or false", body: person("Ada", map[string]any{"customFields": []any{cf("vip", "yes")}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "number field not a number", body: person("Ada", map[string]any{"customFields": []any{cf("seats", "many")}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "date field not a date", body: person("Ada", map[string]any{"customFields": []any{cf("renewal", "tomorrow")}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "url field not a URI", body: person("Ada", map[string]any{"customFields": []any{cf("site", "nope")}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "string field with two values", body: person("Ada", map[string]any{"customFields": []any{cf("plan", "a", "b")}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "custom field value an object", body: person("Ada", map[string]any{"customFields": []any{map[string]any{"key": "plan", "value": map[string]any{"a": 1}}}}), wantPaths: []string{"/customFields/0/value"}, wantMsg: "Expected array of strings, string"},
		{name: "custom field value a list of numbers", body: person("Ada", map[string]any{"customFields": []any{map[string]any{"key": "tags", "value": []int{1}}}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "custom field without value", body: person("Ada", map[string]any{"customFields": []any{map[string]any{"key": "plan"}}}), wantPaths: []string{"/customFields/0/value"}},
		{name: "every error listed", body: map[string]any{"defaultFields": df("emails", []any{item("w", "bad")}), "externalId": long(80), "source": "csv"},
			wantPaths: []string{"/defaultFields/emails/0/value", "/externalId", "/source"}},
		{name: "invalid JSON", body: `{"defaultFields":`, wantPaths: []string{""}},
		{name: "empty body", body: ``, wantPaths: []string{""}, wantMsg: "Expected object"},
		{name: "array body", body: `[]`, wantPaths: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s.URL, "POST", "/v1/contacts", tt.body)
			if tt.wantPaths == nil {
				c := data[workspace.Contact](t, r, http.StatusCreated)
				if c.ID == "" || c.CreatedAt.IsZero() || !c.UpdatedAt.Equal(c.CreatedAt) {
					t.Errorf("created contact lacks id or timestamps: %+v", c)
				}
				return
			}
			eb := errorBody(t, r, http.StatusBadRequest)
			if code, title := wantErrorCode(tt.wantPaths); eb.Code != code || eb.Title != title {
				t.Errorf("code %q title %q, want %s %s", eb.Code, eb.Title, code, title)
			}
			if got := paths(eb); !reflect.DeepEqual(got, tt.wantPaths) {
				t.Fatalf("errors[].path = %q, want %q (%s)", got, tt.wantPaths, r.body)
			}
			if tt.wantMsg != "" && !strings.Contains(eb.Errors[0].Message, tt.wantMsg) {
				t.Errorf("errors[0].message = %q, want it to contain %q", eb.Errors[0].Message, tt.wantMsg)
			}
			for _, fe := range eb.Errors {
				if !strings.Contains(eb.Message, fe.Path+": "+fe.Message) || fe.Schema == nil {
					t.Errorf("message %q does not list %q, or schema missing", eb.Message, fe.Path+": "+fe.Message)
				}
			}
		})
	}
}

func TestCreateContactDefaults(t *testing.T) {
	s := newServer(t, emulator.Options{})
	c := createContact(t, s.URL, map[string]any{"defaultFields": map[string]any{
		"firstName": "Ada", "emails": []any{map[string]any{"name": "work", "value": "ada@example.com"}},
	}, "customFields": []any{map[string]any{"key": "plan", "value": fieldValue("plan", "gold")}, map[string]any{"key": "vip", "value": fieldValue("vip")}}})
	if c.Source == nil || *c.Source != emulator.DefaultSource {
		t.Errorf("source = %v, want %q when omitted on the API", c.Source, emulator.DefaultSource)
	}
	if c.ExternalID != nil || c.SourceURL != nil || c.DefaultFields.LastName != nil {
		t.Errorf("omitted fields not null: %+v", c)
	}
	if len(c.DefaultFields.Emails) != 1 || c.DefaultFields.Emails[0].ID == "" {
		t.Errorf("email item without id: %+v", c.DefaultFields.Emails)
	}
	plan, _ := workspace.EncodeValue("string", testForm, []string{"gold"})
	want := []workspace.CustomField{{Key: "plan", Name: "Plan", Type: "string", Value: plan}}
	if len(c.CustomFields) != 1 || c.CustomFields[0].ID == "" {
		t.Fatalf("custom fields = %+v, want plan only, with an id", c.CustomFields)
	}
	c.CustomFields[0].ID = ""
	if !reflect.DeepEqual(c.CustomFields, want) {
		t.Errorf("custom fields = %+v, want %+v", c.CustomFields, want)
	}
	got := data[workspace.Contact](t, call(t, s.URL, "GET", "/v1/contacts/"+c.ID, nil), http.StatusOK)
	if got.ID != c.ID || *got.DefaultFields.FirstName != "Ada" {
		t.Errorf("GET = %+v", got)
	}

	// A person's create in the app has no default source and may carry a
	// source the API refuses.
	app := data[workspace.Contact](t, call(t, s.URL, "POST", "/_emulator/app/contacts", person("Bea", nil), "Authorization", ""), http.StatusCreated)
	if app.Source != nil {
		t.Errorf("app contact source = %q, want null", *app.Source)
	}
	csv := data[workspace.Contact](t, call(t, s.URL, "POST", "/_emulator/app/contacts", person("Cy", map[string]any{"source": "csv"})), http.StatusCreated)
	if *csv.Source != "csv" {
		t.Errorf("app csv contact source = %v", csv.Source)
	}
}

// TestDuplicateExternalIDNotRefused: the public service is not known to
// enforce (source, externalId) uniqueness, so the emulator does not either,
// and a duplicate shows in the back door.
func TestDuplicateExternalIDNotRefused(t *testing.T) {
	s := newServer(t, emulator.Options{})
	body := person("Ada", map[string]any{"source": "custom-hubspot", "externalId": "hs-1"})
	a := createContact(t, s.URL, body)
	b := createContact(t, s.URL, body)
	if a.ID == b.ID {
		t.Fatal("two creates gave one id")
	}
	all := data[[]workspace.Contact](t, call(t, s.URL, "GET", "/_emulator/contacts", nil, "Authorization", ""), http.StatusOK)
	if len(all) != 2 {
		t.Fatalf("back door holds %d contacts, want 2", len(all))
	}
}

func TestGetAndDeleteContact(t *testing.T) {
	s := newServer(t, emulator.Options{})
	c := createContact(t, s.URL, person("Ada", nil))
	eb := errorBody(t, call(t, s.URL, "GET", "/v1/contacts/nope", nil), http.StatusNotFound)
	if eb.Code != "0400404" || eb.Title != "Not Found" || !strings.Contains(eb.Message, "nope") {
		t.Errorf("404 body = %+v", eb)
	}
	r := call(t, s.URL, "DELETE", "/v1/contacts/"+c.ID, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE = %d %q, want 204 without body", r.status, r.body)
	}
	errorBody(t, call(t, s.URL, "GET", "/v1/contacts/"+c.ID, nil), http.StatusNotFound)
	errorBody(t, call(t, s.URL, "DELETE", "/v1/contacts/"+c.ID, nil), http.StatusNotFound)
	errorBody(t, call(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, map[string]any{}), http.StatusNotFound)
	if n := len(s.Contacts()); n != 0 {
		t.Errorf("%d contacts left", n)
	}
}
