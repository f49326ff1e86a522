package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func createWebhook(t *testing.T, base string, body any) workspace.Webhook {
	t.Helper()
	return data[workspace.Webhook](t, call(t, base, "POST", "/webhooks", body), http.StatusCreated)
}

func contactHook(url string) map[string]any {
	return map[string]any{"url": url, "events": []string{"contact.updated", "contact.deleted"}, "label": "syncd"}
}

func TestCreateWebhook(t *testing.T) {
	s := newServer(t, emulator.Options{})
	wh := createWebhook(t, s.URL, contactHook("https://example.com/hook"))
	if !digitsOnly(wh.ID) || !strings.HasPrefix(wh.Key, "whsec_") || wh.OrgID == "" || wh.APIVersion != versionValue ||
		wh.Status != "enabled" || wh.Label != "syncd" || wh.CreatedAt.IsZero() || len(wh.ResourceIDs) != 0 {
		t.Fatalf("created webhook = %+v", wh)
	}
	got := data[workspace.Webhook](t, call(t, s.URL, "GET", "/webhooks/"+wh.ID, nil), http.StatusOK)
	if got.Key != "" {
		t.Error("GET returns the signing secret")
	}
	wh.Key = ""
	if !reflect.DeepEqual(got, wh) {
		t.Errorf("GET = %+v, want %+v", got, wh)
	}
	list := data[[]workspace.Webhook](t, call(t, s.URL, "GET", "/webhooks", nil), http.StatusOK)
	if len(list) != 1 || list[0].ID != wh.ID || list[0].Key != "" {
		t.Errorf("list = %+v", list)
	}
	disabled := createWebhook(t, s.URL, map[string]any{"url": "https://example.com/2", "events": []string{"message.received"}, "status": "disabled", "resourceIds": []string{"PNabc"}})
	if disabled.Status != "disabled" || !reflect.DeepEqual(disabled.ResourceIDs, []string{"PNabc"}) {
		t.Errorf("second webhook = %+v", disabled)
	}
}

func digitsOnly(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func TestWebhookValidation(t *testing.T) {
	s := newServer(t, emulator.Options{})
	msgHook := func(extra map[string]any) map[string]any {
		b := map[string]any{"url": "https://example.com/h", "events": []string{"message.received"}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name       string
		body       any
		wantPaths  []string // nil: created
		wantSchema string   // a key of errors[0].schema
		wantIDs    []string // resourceIds of the created webhook
	}{
		{name: "every event name", body: map[string]any{"url": "https://example.com/h", "events": emulator.Events}},
		{name: "resourceIds null", body: msgHook(map[string]any{"resourceIds": nil})},
		{name: "resourceIds empty", body: msgHook(map[string]any{"resourceIds": []string{}})},
		{name: "resourceIds star", body: msgHook(map[string]any{"resourceIds": []string{"*"}})},
		{name: "resourceIds phone numbers", body: msgHook(map[string]any{"resourceIds": []string{"PN1", "PNxyz"}}), wantIDs: []string{"PN1", "PNxyz"}},
		{name: "contact events with cleared resourceIds", body: map[string]any{"url": "https://example.com/h", "events": []string{"contact.updated"}, "resourceIds": []string{"*"}}},
		{name: "no url", body: map[string]any{"events": []string{"contact.updated"}}, wantPaths: []string{"/url"}},
		{name: "url not a URI", body: map[string]any{"url": "example.com/h", "events": []string{"contact.updated"}}, wantPaths: []string{"/url"}, wantSchema: "format"},
		{name: "no events", body: map[string]any{"url": "https://example.com/h"}, wantPaths: []string{"/events"}},
		{name: "empty events", body: map[string]any{"url": "https://example.com/h", "events": []string{}}, wantPaths: []string{"/events"}, wantSchema: "minItems"},
		{name: "unknown event", body: map[string]any{"url": "https://example.com/h", "events": []string{"contact.updated", "contact.created"}}, wantPaths: []string{"/events/1"}, wantSchema: "enum"},
		{name: "resourceId not a phone number id", body: msgHook(map[string]any{"resourceIds": []string{"PN1", "US1"}}), wantPaths: []string{"/resourceIds/1"}, wantSchema: "pattern"},
		{name: "star with others", body: msgHook(map[string]any{"resourceIds": []string{"*", "PN1"}}), wantPaths: []string{"/resourceIds/0"}, wantSchema: "pattern"},
		{name: "resourceIds on contact events", body: map[string]any{"url": "https://example.com/h", "events": []string{"message.received", "contact.updated"}, "resourceIds": []string{"PN1"}}, wantPaths: []string{"/resourceIds"}},
		{name: "bad status", body: msgHook(map[string]any{"status": "paused"}), wantPaths: []string{"/status"}, wantSchema: "enum"},
		{name: "unknown property", body: msgHook(map[string]any{"secret": "x"}), wantPaths: []string{"/secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s.URL, "POST", "/webhooks", tt.body)
			if tt.wantPaths == nil {
				wh := data[workspace.Webhook](t, r, http.StatusCreated)
				if !reflect.DeepEqual(wh.ResourceIDs, tt.wantIDs) {
					t.Errorf("resourceIds = %q, want %q", wh.ResourceIDs, tt.wantIDs)
				}
				call(t, s.URL, "DELETE", "/webhooks/"+wh.ID, nil)
				return
			}
			eb := errorBody(t, r, http.StatusBadRequest)
			if got := paths(eb); !reflect.DeepEqual(got, tt.wantPaths) || eb.Code != "0300400" {
				t.Fatalf("code %s paths %q, want 0300400 %q: %s", eb.Code, got, tt.wantPaths, r.body)
			}
			if _, ok := eb.Errors[0].Schema[tt.wantSchema]; tt.wantSchema != "" && !ok {
				t.Errorf("schema %v lacks %q", eb.Errors[0].Schema, tt.wantSchema)
			}
		})
	}
}

func TestWebhookLimit(t *testing.T) {
	s := newServer(t, emulator.Options{})
	var first string
	for i := 0; i < workspace.MaxWebhooks; i++ {
		wh := createWebhook(t, s.URL, contactHook(fmt.Sprintf("https://example.com/%d", i)))
		if i == 0 {
			first = wh.ID
		}
	}
	eb := errorBody(t, call(t, s.URL, "POST", "/webhooks", contactHook("https://example.com/51")), http.StatusBadRequest)
	if eb.Code != "0300400" || !strings.Contains(eb.Message, "50") {
		t.Errorf("51st webhook: %+v", eb)
	}
	if n := len(s.Webhooks()); n != 50 {
		t.Fatalf("%d webhooks, want 50", n)
	}
	if r := call(t, s.URL, "DELETE", "/webhooks/"+first, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d", r.status)
	}
	createWebhook(t, s.URL, contactHook("https://example.com/51"))
}

func TestPatchWebhook(t *testing.T) {
	s := newServer(t, emulator.Options{})
	wh := createWebhook(t, s.URL, map[string]any{"url": "https://example.com/h", "events": []string{"message.received"}, "label": "a", "resourceIds": []string{"PN1"}})
	patch := func(body any) workspace.Webhook {
		t.Helper()
		return data[workspace.Webhook](t, call(t, s.URL, "PATCH", "/webhooks/"+wh.ID, body), http.StatusOK)
	}
	got := patch(map[string]any{"label": "b"})
	if got.Label != "b" || got.URL != wh.URL || !reflect.DeepEqual(got.Events, wh.Events) || !reflect.DeepEqual(got.ResourceIDs, []string{"PN1"}) || !got.UpdatedAt.After(wh.UpdatedAt) {
		t.Fatalf("label patch = %+v", got)
	}
	if got := patch(map[string]any{"status": "disabled"}); got.Status != "disabled" {
		t.Errorf("status = %s", got.Status)
	}
	if got := patch(map[string]any{"status": "enabled", "url": "https://example.com/new", "events": []string{"call.ringing", "message.received"}}); got.Status != "enabled" || got.URL != "https://example.com/new" || len(got.Events) != 2 {
		t.Errorf("patch = %+v", got)
	}
	for _, clear := range []any{nil, []string{}, []string{"*"}} {
		patch(map[string]any{"resourceIds": []string{"PN1", "PN2"}})
		got := patch(map[string]any{"resourceIds": clear})
		if len(got.ResourceIDs) != 0 {
			t.Errorf("resourceIds %v did not clear: %v", clear, got.ResourceIDs)
		}
		if g := data[workspace.Webhook](t, call(t, s.URL, "GET", "/webhooks/"+wh.ID, nil), http.StatusOK); len(g.ResourceIDs) != 0 {
			t.Errorf("GET after clearing with %v: %v", clear, g.ResourceIDs)
		}
	}
	refusals := []struct {
		name string
		body any
		path string
	}{
		{"empty events", map[string]any{"events": []string{}}, "/events"},
		{"null events", map[string]any{"events": nil}, "/events"},
		{"unknown event", map[string]any{"events": []string{"foo"}}, "/events/0"},
		{"bad resource id", map[string]any{"resourceIds": []string{"XX"}}, "/resourceIds/0"},
		{"contact events with resource ids", map[string]any{"events": []string{"contact.updated"}, "resourceIds": []string{"PN1"}}, "/resourceIds"},
		{"bad status", map[string]any{"status": "on"}, "/status"},
		{"unknown property", map[string]any{"key": "whsec_x"}, "/key"},
	}
	for _, tt := range refusals {
		eb := errorBody(t, call(t, s.URL, "PATCH", "/webhooks/"+wh.ID, tt.body), http.StatusBadRequest)
		if len(eb.Errors) != 1 || eb.Errors[0].Path != tt.path {
			t.Errorf("%s: errors %+v, want one at %s", tt.name, eb.Errors, tt.path)
		}
	}
	// Contact events are accepted once the filter is cleared.
	patch(map[string]any{"events": []string{"contact.updated"}, "resourceIds": nil})
	// A contact webhook may not get a filter afterwards.
	errorBody(t, call(t, s.URL, "PATCH", "/webhooks/"+wh.ID, map[string]any{"resourceIds": []string{"PN1"}}), http.StatusBadRequest)

	eb := errorBody(t, call(t, s.URL, "PATCH", "/webhooks/999999", map[string]any{"label": "x"}), http.StatusNotFound)
	if eb.Code != "0300404" || !strings.Contains(eb.Message, "999999") {
		t.Errorf("unknown webhook: %+v", eb)
	}
	eb = errorBody(t, call(t, s.URL, "PATCH", "/webhooks/abc", map[string]any{"label": "x"}), http.StatusBadRequest)
	if eb.Code != "0303400" || eb.Title != "Invalid Id" {
		t.Errorf("non-numeric id: %+v", eb)
	}
}

// TestRotateInvalidID checks the whole body of the spec's example: rotate
// with a non-numeric webhook id.
func TestRotateInvalidID(t *testing.T) {
	s := newServer(t, emulator.Options{})
	r := call(t, s.URL, "POST", "/webhooks/abc/rotate", nil)
	if r.status != http.StatusBadRequest || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", r.status, r.header.Get("Content-Type"))
	}
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"message":     "/webhookId: Expected string to match '^[0-9]+$'",
		"code":        "0303400",
		"status":      float64(400),
		"docs":        emulator.DefaultDocsURL,
		"title":       "Invalid Id",
		"description": `The webhookId "abc" is not a valid id: it must contain digits only.`,
		"errors": []any{map[string]any{
			"path":    "/webhookId",
			"message": "Expected string to match '^[0-9]+$'",
			"value":   "abc",
			"schema":  map[string]any{"type": "string", "pattern": "^[0-9]+$"},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body:\n%s\nwant:\n%v", r.body, want)
	}
}

func TestRotateAndDeleteWebhook(t *testing.T) {
	s := newServer(t, emulator.Options{})
	wh := createWebhook(t, s.URL, contactHook("https://example.com/h"))
	key := data[workspace.SigningSecret](t, call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/rotate", nil), http.StatusOK)
	if !strings.HasPrefix(key.Key, "whsec_") || key.Key == wh.Key {
		t.Errorf("rotated key %q (was %q)", key.Key, wh.Key)
	}
	eb := errorBody(t, call(t, s.URL, "POST", "/webhooks/424242/rotate", nil), http.StatusNotFound)
	if eb.Code != "0300404" || eb.Title != "Not Found" || !strings.Contains(eb.Message, "424242") {
		t.Errorf("rotate unknown: %+v", eb)
	}
	for _, p := range []string{"/webhooks/x1", "/webhooks/1.5/events", "/webhooks/-1/events/test"} {
		method := "GET"
		if strings.HasSuffix(p, "test") {
			method = "POST"
		}
		if eb := errorBody(t, call(t, s.URL, method, p, nil), http.StatusBadRequest); eb.Code != "0303400" {
			t.Errorf("%s: code %s", p, eb.Code)
		}
	}
	if r := call(t, s.URL, "DELETE", "/webhooks/"+wh.ID, nil); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	errorBody(t, call(t, s.URL, "GET", "/webhooks/"+wh.ID, nil), http.StatusNotFound)
	errorBody(t, call(t, s.URL, "DELETE", "/webhooks/"+wh.ID, nil), http.StatusNotFound)
}
