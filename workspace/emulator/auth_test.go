package emulator_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace/emulator"
)

// apiOp is one operation of the API with a request that reaches it.
type apiOp struct {
	method, path string
	body         any
	write        bool
	webhook      bool
	area         string // first two digits of its error codes
}

var apiOps = []apiOp{
	{method: "POST", path: "/v1/contacts", body: person("Ada", nil), write: true, area: "04"},
	{method: "GET", path: "/v1/contacts", area: "04"},
	{method: "GET", path: "/v1/contacts/x", area: "04"},
	{method: "PATCH", path: "/v1/contacts/x", body: map[string]any{}, write: true, area: "04"},
	{method: "DELETE", path: "/v1/contacts/x", write: true, area: "04"},
	{method: "GET", path: "/v1/contact-custom-fields", area: "05"},
	{method: "GET", path: "/v1/organization", area: "06"},
	{method: "GET", path: "/organization", area: "06"},
	{method: "POST", path: "/webhooks", body: map[string]any{"url": "http://127.0.0.1:1/h", "events": []string{"contact.updated"}}, write: true, webhook: true, area: "03"},
	{method: "GET", path: "/webhooks", webhook: true, area: "03"},
	{method: "GET", path: "/webhooks/1", webhook: true, area: "03"},
	{method: "PATCH", path: "/webhooks/1", body: map[string]any{}, write: true, webhook: true, area: "03"},
	{method: "DELETE", path: "/webhooks/1", write: true, webhook: true, area: "03"},
	{method: "POST", path: "/webhooks/1/rotate", write: true, webhook: true, area: "03"},
	{method: "GET", path: "/webhooks/1/events", webhook: true, area: "03"},
	{method: "POST", path: "/webhooks/1/events/EV1/retry", write: true, webhook: true, area: "03"},
	{method: "POST", path: "/webhooks/1/events/test", write: true, webhook: true, area: "03"},
}

func TestAuthentication(t *testing.T) {
	s := newServer(t, emulator.Options{})
	for _, op := range apiOps {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			for _, key := range []string{"", "wrong", "Bearer " + testKey, strings.ToUpper(testKey)} {
				eb := errorBody(t, call(t, s.URL, op.method, op.path, op.body, "Authorization", key), http.StatusUnauthorized)
				if eb.Code != op.area+"00401" || eb.Title != "Unauthorized" || !strings.Contains(eb.Message, "not authorized") {
					t.Errorf("key %q: %+v", key, eb)
				}
			}
			r := call(t, s.URL, op.method, op.path, op.body, "Authorization", readOnlyKey)
			if op.write {
				eb := errorBody(t, r, http.StatusForbidden)
				if eb.Code != op.area+"00403" || eb.Title != "Forbidden" || !strings.Contains(eb.Message, "forbidden") {
					t.Errorf("read-only key on a write: %+v", eb)
				}
			} else if r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
				t.Errorf("read-only key on a read: %d %s", r.status, r.body)
			}
		})
	}
	if n := len(s.Contacts()); n != 0 {
		t.Errorf("refused creates left %d contacts", n)
	}
}

func TestVersionHeader(t *testing.T) {
	s := newServer(t, emulator.Options{})
	for _, op := range apiOps {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			missing := call(t, s.URL, op.method, op.path, op.body, versionName, "")
			if op.webhook {
				eb := errorBody(t, missing, http.StatusBadRequest)
				if eb.Code != "0300400" || len(eb.Errors) != 1 || eb.Errors[0].Path != "/headers/service-api-version" || eb.Errors[0].Message != "Expected required property" {
					t.Errorf("missing version on a webhook operation: %s", missing.body)
				}
			} else if missing.status == http.StatusBadRequest {
				t.Errorf("missing version refused on a non-webhook operation: %s", missing.body)
			}
			wrong := call(t, s.URL, op.method, op.path, op.body, versionName, "2024-01-01")
			eb := errorBody(t, wrong, http.StatusBadRequest)
			if eb.Code != op.area+"00400" || eb.Errors[0].Value != "2024-01-01" {
				t.Errorf("wrong version: %s", wrong.body)
			}
		})
	}
	// Only the create without a version header went through.
	if n := len(s.Contacts()); n != 1 {
		t.Errorf("%d contacts, want the 1 created without a version header", n)
	}
	if n := len(s.Webhooks()); n != 0 {
		t.Errorf("%d webhooks, want none", n)
	}
	st := s.Stats()
	if st.MissingVersion != len(apiOps) {
		t.Errorf("stats missingVersion = %d, want %d", st.MissingVersion, len(apiOps))
	}
}

// TestVersionHeaderName: the header's name and value are options, as the
// production service names it after its brand.
func TestVersionHeaderName(t *testing.T) {
	s := newServer(t, emulator.Options{VersionHeader: "Brand-Api-Version", Version: "2030-01-01"})
	r := call(t, s.URL, "GET", "/webhooks", nil, versionName, "", "Brand-Api-Version", "2030-01-01")
	if r.status != http.StatusOK {
		t.Fatalf("custom header: %d %s", r.status, r.body)
	}
	eb := errorBody(t, call(t, s.URL, "GET", "/webhooks", nil, versionName, ""), http.StatusBadRequest)
	if eb.Errors[0].Path != "/headers/brand-api-version" {
		t.Errorf("path = %q", eb.Errors[0].Path)
	}
}

func TestUnmatchedRoute(t *testing.T) {
	s := newServer(t, emulator.Options{})
	eb := errorBody(t, call(t, s.URL, "GET", "/v1/conversations", nil), http.StatusNotFound)
	if eb.Code != "0000404" {
		t.Errorf("code = %s", eb.Code)
	}
	errorBody(t, call(t, s.URL, "PUT", "/v1/contacts/x", map[string]any{}), http.StatusNotFound)
	if got := s.Stats().Requests["GET (unmatched)"]; got != 1 {
		t.Errorf("unmatched requests counted %d, want 1", got)
	}
}

func TestOrganizationAndCustomFields(t *testing.T) {
	s := newServer(t, emulator.Options{OrganizationName: "Acme"})
	for _, p := range []string{"/v1/organization", "/organization"} {
		org := data[struct {
			ID, Name, SubscriptionStatus string
		}](t, call(t, s.URL, "GET", p, nil), http.StatusOK)
		if org.Name != "Acme" || org.ID == "" || org.SubscriptionStatus == "" {
			t.Errorf("%s = %+v", p, org)
		}
	}
	defs := data[[]struct{ Name, Key, Type string }](t, call(t, s.URL, "GET", "/v1/contact-custom-fields", nil), http.StatusOK)
	if len(defs) != len(testFields) || defs[0].Key != "plan" || defs[0].Name != "Plan" || defs[0].Type != "string" {
		t.Errorf("custom fields = %+v", defs)
	}
}
