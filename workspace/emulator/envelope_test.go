package emulator_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// keysOf returns the sorted keys of the JSON object raw.
func keysOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %s", raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestDeliveryEnvelopeAsDocumented: by default a delivery is exactly the
// envelope of the service's webhook guide (workspace/FACTS.md): the keys
// id ("EV..."), object "event", apiVersion (the webhook's), createdAt
// (RFC 3339 with milliseconds), type and data, and data holds only
// object: the contact, tagged "object": "contact"; signed with the
// Standard Webhooks headers whose webhook-id is the event's id. With
// WebhookEnvelope "resource" the contact is in data.resource, as earlier
// emulators sent it, and the envelope has no "object".
func TestDeliveryEnvelopeAsDocumented(t *testing.T) {
	tests := []struct {
		name         string
		envelope     string
		wantKeys     []string
		wantDataKeys []string
		wantObject   string
	}{
		{name: "documented default", envelope: "",
			wantKeys: []string{"apiVersion", "createdAt", "data", "id", "object", "type"}, wantDataKeys: []string{"object"}, wantObject: "event"},
		{name: "documented by name", envelope: emulator.EnvelopeObject,
			wantKeys: []string{"apiVersion", "createdAt", "data", "id", "object", "type"}, wantDataKeys: []string{"object"}, wantObject: "event"},
		{name: "old resource shape behind the option", envelope: emulator.EnvelopeResource,
			wantKeys: []string{"apiVersion", "createdAt", "data", "id", "type"}, wantDataKeys: []string{"resource"}},
	}
	created := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReceiver(t, nil)
			s := newServer(t, emulator.Options{WebhookEnvelope: tt.envelope})
			wh := createWebhook(t, s.URL, contactHook(rc.URL))
			c := createContact(t, s.URL, person("Ada", map[string]any{"externalId": "x1"}))
			call(t, s.URL, "DELETE", "/v1/contacts/"+c.ID, nil)
			hits := rc.wait(t, 2)
			for i, h := range hits {
				if got := keysOf(t, h.body); !reflect.DeepEqual(got, tt.wantKeys) {
					t.Errorf("delivery %d keys %v, want %v: %s", i, got, tt.wantKeys, h.body)
				}
				var env struct {
					ID, Object, APIVersion, CreatedAt, Type string
					Data                                    map[string]json.RawMessage
				}
				if err := json.Unmarshal(h.body, &env); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(env.ID, "EV") || env.Object != tt.wantObject || env.APIVersion != wh.APIVersion ||
					!created.MatchString(env.CreatedAt) || env.Type != []string{"contact.updated", "contact.deleted"}[i] {
					t.Errorf("delivery %d envelope %+v", i, env)
				}
				raw, _ := json.Marshal(env.Data)
				if got := keysOf(t, raw); !reflect.DeepEqual(got, tt.wantDataKeys) {
					t.Errorf("delivery %d data keys %v, want %v", i, got, tt.wantDataKeys)
				}
				res := env.Data[tt.wantDataKeys[0]]
				var tag struct{ Object *string }
				_ = json.Unmarshal(res, &tag)
				switch {
				case tt.envelope == emulator.EnvelopeResource && tag.Object != nil:
					t.Errorf("old shape's contact carries object %q", *tag.Object)
				case tt.envelope != emulator.EnvelopeResource && (tag.Object == nil || *tag.Object != "contact"):
					t.Errorf("contact in data.object not tagged object=contact: %s", res)
				}
				var got workspace.Contact
				if err := json.Unmarshal(res, &got); err != nil || got.ID != c.ID || got.ExternalID == nil || *got.ExternalID != "x1" {
					t.Errorf("delivery %d contact %+v (%v)", i, got, err)
				}
				if h.header.Get(signature.HeaderID) != env.ID || h.header.Get("Content-Type") != "application/json" {
					t.Errorf("headers %v", h.header)
				}
				if err := (&signature.Verifier{Secrets: []string{wh.Key}}).Verify(h.header, h.body); err != nil {
					t.Errorf("delivery %d does not verify: %v", i, err)
				}
			}
		})
	}
}

// TestWebhookRouteForms: the webhook operations answer under /webhooks
// (the spec) and /v1/webhooks (the published OpenAPI document) by
// default, each counted under its own route; WebhookRoutes serves one
// form only, the other answering 404.
func TestWebhookRouteForms(t *testing.T) {
	tests := []struct {
		name   string
		routes string
		specOK bool
		v1OK   bool
	}{
		{name: "both by default", routes: "", specOK: true, v1OK: true},
		{name: "spec only", routes: emulator.RoutesSpec, specOK: true},
		{name: "v1 only", routes: emulator.RoutesV1, v1OK: true},
	}
	status := func(ok bool) int {
		if ok {
			return http.StatusOK
		}
		return http.StatusNotFound
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, emulator.Options{WebhookRoutes: tt.routes})
			base := "/webhooks"
			if !tt.specOK {
				base = "/v1/webhooks"
			}
			wh := data[workspace.Webhook](t, call(t, s.URL, "POST", base, contactHook("https://example.com/h")), http.StatusCreated)
			for _, p := range []string{"/webhooks", "/webhooks/" + wh.ID, "/webhooks/" + wh.ID + "/events"} {
				if got := call(t, s.URL, "GET", p, nil).status; got != status(tt.specOK) {
					t.Errorf("GET %s: %d, want %d", p, got, status(tt.specOK))
				}
				if got := call(t, s.URL, "GET", "/v1"+p, nil).status; got != status(tt.v1OK) {
					t.Errorf("GET /v1%s: %d, want %d", p, got, status(tt.v1OK))
				}
			}
			if tt.v1OK {
				// The /v1 form keeps the webhook rules: version header and id pattern.
				errorBody(t, call(t, s.URL, "GET", "/v1/webhooks", nil, versionName, ""), http.StatusBadRequest)
				errorBody(t, call(t, s.URL, "GET", "/v1/webhooks/abc", nil), http.StatusBadRequest)
				if n := s.Stats().Requests["GET /v1/webhooks"]; n < 2 {
					t.Errorf("GET /v1/webhooks counted %d times", n)
				}
			}
		})
	}
}

// TestNoOrganization: with NoOrganization both forms of the organization
// route answer 404, while the custom-field list still answers.
func TestNoOrganization(t *testing.T) {
	for _, tt := range []struct {
		name string
		no   bool
		want int
	}{{"served by default", false, http.StatusOK}, {"refused with NoOrganization", true, http.StatusNotFound}} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, emulator.Options{NoOrganization: tt.no})
			for _, p := range []string{"/v1/organization", "/organization"} {
				if got := call(t, s.URL, "GET", p, nil).status; got != tt.want {
					t.Errorf("GET %s: %d, want %d", p, got, tt.want)
				}
			}
			if got := call(t, s.URL, "GET", "/v1/contact-custom-fields", nil).status; got != http.StatusOK {
				t.Errorf("custom-field list: %d", got)
			}
		})
	}
}
