package emulator_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// fullContact creates a contact with every kind of field set.
func fullContact(t *testing.T, base string) workspace.Contact {
	t.Helper()
	return createContact(t, base, map[string]any{
		"defaultFields": map[string]any{
			"firstName": "Ada", "lastName": "Lovelace", "company": "Engines", "role": "Analyst",
			"emails": []any{
				map[string]any{"name": "work", "value": "ada@work.example"},
				map[string]any{"name": "home", "value": "ada@home.example"},
			},
			"phoneNumbers": []any{map[string]any{"name": "mobile", "value": "+14155550100"}},
		},
		"customFields": []any{
			map[string]any{"key": "plan", "value": fieldValue("plan", "gold")},
			map[string]any{"key": "tags", "value": fieldValue("tags", "a", "b")},
		},
		"source": "custom-hubspot", "externalId": "hs-1", "sourceUrl": "https://crm.example.com/1",
	})
}

func itemByName(items []workspace.Item, name string) (workspace.Item, bool) {
	for _, it := range items {
		if it.Name == name {
			return it, true
		}
	}
	return workspace.Item{}, false
}

func TestPatchContactPartial(t *testing.T) {
	s := newServer(t, emulator.Options{})
	orig := fullContact(t, s.URL)
	home, _ := itemByName(orig.DefaultFields.Emails, "home")
	work, _ := itemByName(orig.DefaultFields.Emails, "work")
	plan := orig.CustomFields[0]

	patch := map[string]any{
		"defaultFields": map[string]any{
			"company": nil, // cleared
			"emails": []any{
				map[string]any{"id": home.ID, "value": nil},                   // removed by id
				map[string]any{"name": "work", "value": "ada@new.example"},    // first item named work
				map[string]any{"name": "other", "value": "ada@other.example"}, // appended
				map[string]any{"name": "gone", "value": nil},                  // nothing to remove
			},
		},
		"customFields": []any{
			map[string]any{"id": plan.ID, "value": fieldValue("plan", "platinum")}, // by id
			map[string]any{"key": "tags", "value": fieldValue("tags")},             // cleared
			map[string]any{"key": "vip", "value": fieldValue("vip", "true")},       // added
		},
		"externalId": nil,
	}
	got := data[workspace.Contact](t, call(t, s.URL, "PATCH", "/v1/contacts/"+orig.ID, patch), http.StatusOK)

	if got.DefaultFields.Company != nil {
		t.Errorf("company = %q, want null", *got.DefaultFields.Company)
	}
	if *got.DefaultFields.FirstName != "Ada" || *got.DefaultFields.LastName != "Lovelace" || *got.DefaultFields.Role != "Analyst" {
		t.Errorf("omitted default fields changed: %+v", got.DefaultFields)
	}
	if !reflect.DeepEqual(got.DefaultFields.PhoneNumbers, orig.DefaultFields.PhoneNumbers) {
		t.Errorf("phone numbers changed: %+v", got.DefaultFields.PhoneNumbers)
	}
	wantEmails := []workspace.Item{{ID: work.ID, Name: "work", Value: "ada@new.example"}}
	if len(got.DefaultFields.Emails) != 2 || !reflect.DeepEqual(got.DefaultFields.Emails[:1], wantEmails) {
		t.Fatalf("emails = %+v, want work changed in place (same id), home removed, other appended", got.DefaultFields.Emails)
	}
	if o := got.DefaultFields.Emails[1]; o.Name != "other" || o.Value != "ada@other.example" || o.ID == "" || o.ID == home.ID {
		t.Errorf("appended email = %+v", o)
	}
	if got.ExternalID != nil || got.Source == nil || *got.Source != "custom-hubspot" || *got.SourceURL != "https://crm.example.com/1" {
		t.Errorf("externalId not cleared or source/sourceUrl changed: %+v", got)
	}
	if fields := fieldTexts(got); !reflect.DeepEqual(fields, map[string][]string{"plan": {"platinum"}, "vip": {"true"}}) {
		t.Errorf("custom fields = %v", fields)
	}
	if got.CustomFields[0].ID != plan.ID {
		t.Errorf("plan field id changed: %s -> %s", plan.ID, got.CustomFields[0].ID)
	}
	if !got.UpdatedAt.After(orig.UpdatedAt) || !got.CreatedAt.Equal(orig.CreatedAt) {
		t.Errorf("updatedAt %v (was %v), createdAt %v (was %v)", got.UpdatedAt, orig.UpdatedAt, got.CreatedAt, orig.CreatedAt)
	}
	again := data[workspace.Contact](t, call(t, s.URL, "GET", "/v1/contacts/"+orig.ID, nil), http.StatusOK)
	if !reflect.DeepEqual(again, got) {
		t.Errorf("GET after PATCH = %+v, want the PATCH answer %+v", again, got)
	}

	// An empty patch changes nothing but updatedAt.
	same := data[workspace.Contact](t, call(t, s.URL, "PATCH", "/v1/contacts/"+orig.ID, map[string]any{}), http.StatusOK)
	if !same.UpdatedAt.After(got.UpdatedAt) {
		t.Errorf("empty patch: updatedAt %v, want after %v", same.UpdatedAt, got.UpdatedAt)
	}
	same.UpdatedAt = got.UpdatedAt
	if !reflect.DeepEqual(same, got) {
		t.Errorf("empty patch changed the contact: %+v", same)
	}
}

func TestPatchContactValidation(t *testing.T) {
	s := newServer(t, emulator.Options{})
	c := fullContact(t, s.URL)
	long := strings.Repeat("y", 76)
	tests := []struct {
		name      string
		patch     any
		wantPaths []string
		check     func(t *testing.T, c workspace.Contact)
	}{
		{name: "source of 75 on update", patch: map[string]any{"source": strings.Repeat("s", 75)},
			check: func(t *testing.T, c workspace.Contact) {
				if len(*c.Source) != 75 {
					t.Errorf("source = %q", *c.Source)
				}
			}},
		{name: "source null clears", patch: map[string]any{"source": nil},
			check: func(t *testing.T, c workspace.Contact) {
				if c.Source != nil {
					t.Errorf("source = %q, want null", *c.Source)
				}
			}},
		{name: "sourceUrl null clears", patch: map[string]any{"sourceUrl": nil},
			check: func(t *testing.T, c workspace.Contact) {
				if c.SourceURL != nil {
					t.Errorf("sourceUrl = %q", *c.SourceURL)
				}
			}},
		{name: "phone by name", patch: map[string]any{"defaultFields": map[string]any{"phoneNumbers": []any{map[string]any{"name": "mobile", "value": "+442071838750"}}}},
			check: func(t *testing.T, c workspace.Contact) {
				if len(c.DefaultFields.PhoneNumbers) != 1 || c.DefaultFields.PhoneNumbers[0].Value != "+442071838750" {
					t.Errorf("phones = %+v", c.DefaultFields.PhoneNumbers)
				}
			}},
		{name: "source of 76", patch: map[string]any{"source": strings.Repeat("s", 76)}, wantPaths: []string{"/source"}},
		{name: "reserved source", patch: map[string]any{"source": "zapier"}, wantPaths: []string{"/source"}},
		{name: "reserved prefix", patch: map[string]any{"source": "CSV2"}, wantPaths: []string{"/source"}},
		{name: "externalId of 76", patch: map[string]any{"externalId": long}, wantPaths: []string{"/externalId"}},
		{name: "sourceUrl not a URI", patch: map[string]any{"sourceUrl": "crm/1"}, wantPaths: []string{"/sourceUrl"}},
		{name: "firstName null", patch: map[string]any{"defaultFields": map[string]any{"firstName": nil}}, wantPaths: []string{"/defaultFields/firstName"}},
		{name: "unknown item id", patch: map[string]any{"defaultFields": map[string]any{"emails": []any{map[string]any{"id": "ITnope", "value": "a@b.example"}}}}, wantPaths: []string{"/defaultFields/emails/0/id"}},
		{name: "item without value", patch: map[string]any{"defaultFields": map[string]any{"emails": []any{map[string]any{"name": "work"}}}}, wantPaths: []string{"/defaultFields/emails/0/value"}},
		{name: "bad email", patch: map[string]any{"defaultFields": map[string]any{"emails": []any{map[string]any{"name": "work", "value": "@"}}}}, wantPaths: []string{"/defaultFields/emails/0/value"}},
		{name: "bad phone", patch: map[string]any{"defaultFields": map[string]any{"phoneNumbers": []any{map[string]any{"name": "m", "value": "0044"}}}}, wantPaths: []string{"/defaultFields/phoneNumbers/0/value"}},
		{name: "custom field without key or id", patch: map[string]any{"customFields": []any{map[string]any{"value": []string{"x"}}}}, wantPaths: []string{"/customFields/0/key"}},
		{name: "unknown custom field key", patch: map[string]any{"customFields": []any{map[string]any{"key": "shoe", "value": []string{"x"}}}}, wantPaths: []string{"/customFields/0/key"}},
		{name: "unknown custom field id", patch: map[string]any{"customFields": []any{map[string]any{"id": "CFnope", "value": []string{"x"}}}}, wantPaths: []string{"/customFields/0/id"}},
		{name: "bad boolean value", patch: map[string]any{"customFields": []any{map[string]any{"key": "vip", "value": []string{"1"}}}}, wantPaths: []string{"/customFields/0/value"}},
		{name: "unknown property", patch: map[string]any{"createdAt": "2020-01-01T00:00:00Z"}, wantPaths: []string{"/createdAt"}},
		{name: "createdByUserId is not updatable", patch: map[string]any{"createdByUserId": "US1"}, wantPaths: []string{"/createdByUserId"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := data[workspace.Contact](t, call(t, s.URL, "GET", "/v1/contacts/"+c.ID, nil), http.StatusOK)
			r := call(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, tt.patch)
			if tt.wantPaths == nil {
				tt.check(t, data[workspace.Contact](t, r, http.StatusOK))
				return
			}
			eb := errorBody(t, r, http.StatusBadRequest)
			code, _ := wantErrorCode(tt.wantPaths)
			if got := paths(eb); !reflect.DeepEqual(got, tt.wantPaths) || eb.Code != code {
				t.Fatalf("code %s paths %q, want %s %q (%s)", eb.Code, got, code, tt.wantPaths, r.body)
			}
			after := data[workspace.Contact](t, call(t, s.URL, "GET", "/v1/contacts/"+c.ID, nil), http.StatusOK)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("a refused patch changed the contact:\n%+v\n%+v", before, after)
			}
		})
	}
}
