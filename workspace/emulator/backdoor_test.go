package emulator_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func TestBackdoorStats(t *testing.T) {
	s := newServer(t, emulator.Options{Rate: 1, Burst: 2})
	c := createContact(t, s.URL, person("Ada", nil))
	call(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, map[string]any{})
	call(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, map[string]any{}) // throttled
	call(t, s.URL, "GET", "/v1/contacts/"+c.ID, nil, "Authorization", "wrong")
	call(t, s.URL, "GET", "/_emulator/contacts", nil) // not counted
	r := call(t, s.URL, "GET", "/_emulator/stats", nil, "Authorization", "")
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil || r.status != 200 {
		t.Fatalf("stats: %d %s", r.status, r.body)
	}
	want := map[string]any{
		"requests":       map[string]any{"POST /v1/contacts": 1.0, "PATCH /v1/contacts/{id}": 2.0, "GET /v1/contacts/{id}": 1.0},
		"throttled":      1.0,
		"faults":         0.0,
		"faultsByKind":   map[string]any{},
		"missingVersion": 0.0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats = %s, want %v", r.body, want)
	}
}

func TestBackdoorAppContacts(t *testing.T) {
	s := newServer(t, emulator.Options{FaultRate: 1, Rate: 1, Burst: 1})
	// The back door needs no key, meets no fault and no rate limit.
	var id string
	for i := 0; i < 5; i++ {
		c := data[workspace.Contact](t, call(t, s.URL, "POST", "/_emulator/app/contacts", person("Ada", nil), "Authorization", ""), http.StatusCreated)
		id = c.ID
	}
	eb := errorBody(t, call(t, s.URL, "POST", "/_emulator/app/contacts", map[string]any{"defaultFields": map[string]any{}}), http.StatusBadRequest)
	if !reflect.DeepEqual(paths(eb), []string{"/defaultFields/firstName"}) {
		t.Errorf("app create without first name: %+v", eb.Errors)
	}
	c := data[workspace.Contact](t, call(t, s.URL, "PATCH", "/_emulator/app/contacts/"+id, map[string]any{"defaultFields": map[string]any{"company": "X"}}), http.StatusOK)
	if *c.DefaultFields.Company != "X" || !c.UpdatedAt.After(c.CreatedAt) {
		t.Errorf("app patch = %+v", c)
	}
	errorBody(t, call(t, s.URL, "PATCH", "/_emulator/app/contacts/"+id, map[string]any{"defaultFields": map[string]any{"emails": []any{map[string]any{"name": "w", "value": "bad"}}}}), http.StatusBadRequest)
	if r := call(t, s.URL, "DELETE", "/_emulator/app/contacts/"+id, nil); r.status != http.StatusNoContent {
		t.Errorf("app delete: %d", r.status)
	}
	errorBody(t, call(t, s.URL, "DELETE", "/_emulator/app/contacts/"+id, nil), http.StatusNotFound)
	all := data[[]workspace.Contact](t, call(t, s.URL, "GET", "/_emulator/contacts", nil), http.StatusOK)
	if len(all) != 4 {
		t.Errorf("%d contacts, want 4", len(all))
	}
	if st := s.Stats(); len(st.Requests) != 0 || st.Faults != 0 {
		t.Errorf("back door counted as API: %+v", st)
	}
}

func TestBackdoorFaultsAndReset(t *testing.T) {
	s := newServer(t, emulator.Options{Seed: 11})
	first := createContact(t, s.URL, person("Ada", nil))
	createWebhook(t, s.URL, contactHook("http://127.0.0.1:1/h"))

	r := call(t, s.URL, "POST", "/_emulator/faults", map[string]any{"rate": 1})
	if r.status != 200 || s.FaultRate() != 1 {
		t.Fatalf("set faults: %d %s", r.status, r.body)
	}
	eb := errorBody(t, call(t, s.URL, "POST", "/_emulator/faults", map[string]any{"rate": 1.5}), http.StatusBadRequest)
	if eb.Errors[0].Path != "/rate" {
		t.Errorf("rate 1.5: %+v", eb)
	}
	errorBody(t, call(t, s.URL, "POST", "/_emulator/faults", map[string]any{"rate": "high"}), http.StatusBadRequest)
	if s.FaultRate() != 1 {
		t.Errorf("refused changes applied: %v", s.FaultRate())
	}

	if r := call(t, s.URL, "POST", "/_emulator/reset", nil); r.status != http.StatusNoContent {
		t.Fatalf("reset: %d", r.status)
	}
	if len(s.Contacts()) != 0 || len(s.Webhooks()) != 0 || len(s.Stats().Requests) != 0 || s.FaultRate() != 0 {
		t.Fatalf("after reset: %d contacts, %d webhooks, stats %+v, fault rate %v", len(s.Contacts()), len(s.Webhooks()), s.Stats(), s.FaultRate())
	}
	// A reset emulator is a new one: the same seed gives the same ids.
	again := createContact(t, s.URL, person("Ada", nil))
	if again.ID != first.ID {
		t.Errorf("id after reset %s, want %s as in a new emulator", again.ID, first.ID)
	}
}
