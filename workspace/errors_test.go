package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The rotate error of the spec: a non-numeric webhook id.
const rotateInvalidIDBody = `{
  "message": "Invalid webhook id",
  "code": "0303400",
  "status": 400,
  "docs": "https://docs.example/errors",
  "title": "Invalid Id",
  "description": "The webhook id must match the pattern",
  "trace": "abc123",
  "errors": [{"path": "/webhookId", "message": "Expected string to match '^[0-9]+$'", "value": "abc",
              "schema": {"type": "string", "pattern": "^[0-9]+$"}}]
}`

func TestAPIErrorDecoding(t *testing.T) {
	const key = "secret-key-123"
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        ErrorBody
		inError     []string // substrings of Error()
		notFound    bool
		rateLimited bool
		validation  bool
		unauth      bool
		transient   bool
	}{
		{name: "spec validation body", status: 400, contentType: "application/json", body: rotateInvalidIDBody,
			want: ErrorBody{Message: "Invalid webhook id", Code: "0303400", Status: 400, Docs: "https://docs.example/errors",
				Title: "Invalid Id", Description: "The webhook id must match the pattern", Trace: "abc123",
				Errors: []FieldError{{Path: "/webhookId", Message: "Expected string to match '^[0-9]+$'", Value: "abc",
					Schema: map[string]any{"type": "string", "pattern": "^[0-9]+$"}}}},
			inError:    []string{"POST /webhooks/{id}/rotate", "400", "Invalid Id", "0303400", "Invalid webhook id"},
			validation: true},
		{name: "not found without code", status: 404, contentType: "application/json",
			body:     `{"message":"Webhook 99 not found","title":"Not Found"}`,
			want:     ErrorBody{Message: "Webhook 99 not found", Title: "Not Found"},
			inError:  []string{"404 Not Found", "Webhook 99 not found"},
			notFound: true},
		{name: "unauthorized", status: 401, contentType: "application/json",
			body: `{"message":"Access to the webhook is not authorized","code":"0300401","title":"Unauthorized"}`,
			want: ErrorBody{Message: "Access to the webhook is not authorized", Code: "0300401", Title: "Unauthorized"}, unauth: true,
			inError: []string{"401 Unauthorized (code 0300401)"}},
		{name: "forbidden", status: 403, contentType: "application/json",
			body: `{"message":"forbidden","title":"Forbidden"}`, want: ErrorBody{Message: "forbidden", Title: "Forbidden"}, unauth: true},
		{name: "unprocessable", status: 422, contentType: "application/json",
			body: `{"message":"firstName: required","title":"Unprocessable Entity"}`,
			want: ErrorBody{Message: "firstName: required", Title: "Unprocessable Entity"}, validation: true},
		{name: "rate limited", status: 429, contentType: "application/json",
			body: `{"message":"Too many requests","title":"Too Many Requests","status":429}`,
			want: ErrorBody{Message: "Too many requests", Title: "Too Many Requests", Status: 429}, rateLimited: true, transient: true},
		{name: "only field errors", status: 400, contentType: "application/json",
			body: `{"title":"Bad Request","errors":[{"path":"/externalId","message":"too long","schema":{"type":"string"}}]}`,
			want: ErrorBody{Title: "Bad Request", Errors: []FieldError{{Path: "/externalId", Message: "too long",
				Schema: map[string]any{"type": "string"}}}},
			inError: []string{"/externalId: too long"}, validation: true},
		{name: "html gateway error", status: 502, contentType: "text/html",
			body:    "<html><body>Bad Gateway</body></html>",
			want:    ErrorBody{Message: "<html><body>Bad Gateway</body></html>"},
			inError: []string{"502 Bad Gateway", "<html>"}, transient: true},
		{name: "long text truncated", status: 500, contentType: "text/plain", body: strings.Repeat("x", 5000),
			want: ErrorBody{Message: strings.Repeat("x", maxErrorText) + "…"}, transient: true},
		{name: "empty body", status: 503, want: ErrorBody{}, inError: []string{"503 Service Unavailable"}, transient: true},
		{name: "json that is not an object", status: 500, contentType: "application/json", body: `"oops"`,
			want: ErrorBody{Message: `"oops"`}, transient: true},
		{name: "echoed key redacted", status: 400, contentType: "text/plain", body: "bad header Authorization: " + key,
			want: ErrorBody{Message: "bad header Authorization: [redacted]"}, validation: true},
		{name: "echoed key redacted in json", status: 400, contentType: "application/json",
			body: `{"message":"key ` + key + ` invalid","title":"Bad Request"}`,
			want: ErrorBody{Message: "key [redacted] invalid", Title: "Bad Request"}, validation: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteRotateWebhookSecret: func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}})
			opts := testClientOptions(t, f.URL)
			opts.APIKey = key + "-" + uniqueKey(t) // unique, and containing key
			opts.MaxRetries = -1
			c := newTestClient(t, opts)
			c.apiKey = key // what the redaction looks for
			_, err := c.RotateWebhookSecret(context.Background(), "17")
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *APIError", err)
			}
			if ae.Status != tc.status || ae.Method != http.MethodPost || ae.Route != RouteRotateWebhookSecret {
				t.Errorf("APIError = %s %s %d", ae.Method, ae.Route, ae.Status)
			}
			if got, want := fmt.Sprintf("%#v", ae.Body), fmt.Sprintf("%#v", tc.want); got != want {
				t.Errorf("body = %s\nwant   %s", got, want)
			}
			msg := err.Error()
			for _, s := range tc.inError {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not contain %q", msg, s)
				}
			}
			if strings.Contains(msg, key) {
				t.Errorf("error leaks the key: %q", msg)
			}
			checks := []struct {
				name string
				got  bool
				want bool
			}{
				{"IsNotFound", IsNotFound(err), tc.notFound},
				{"IsRateLimited", IsRateLimited(err), tc.rateLimited},
				{"IsValidation", IsValidation(err), tc.validation},
				{"IsUnauthorized", IsUnauthorized(err), tc.unauth},
				{"IsTransient", IsTransient(err), tc.transient},
			}
			for _, ch := range checks {
				if ch.got != ch.want {
					t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
				}
			}
		})
	}
}

func TestErrorHelpersOnOtherErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		transient  bool
		validation bool
	}{
		{"nil", nil, false, false},
		{"plain", errors.New("boom"), false, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false, false},
		{"deadline", context.DeadlineExceeded, false, false},
		{"transport", fmt.Errorf("get: %w", &transportError{route: RouteGetContact, err: io.ErrUnexpectedEOF}), true, false},
		{"transport timeout", &transportError{route: RouteGetContact, err: context.DeadlineExceeded}, true, false},
		{"client-side refusal", fmt.Errorf("list: %w", ErrInvalidRequest), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsTransient(tc.err); got != tc.transient {
				t.Errorf("IsTransient = %v, want %v", got, tc.transient)
			}
			if got := IsValidation(tc.err); got != tc.validation {
				t.Errorf("IsValidation = %v, want %v", got, tc.validation)
			}
			if IsNotFound(tc.err) || IsRateLimited(tc.err) || IsUnauthorized(tc.err) {
				t.Error("a status helper matched an error without status")
			}
		})
	}
}

func TestEmptyIDRefused(t *testing.T) {
	f := newFakeAPI(t, allRoutes())
	c := newTestClient(t, testClientOptions(t, f.URL))
	ctx := context.Background()
	calls := map[string]error{
		"get contact":    func() error { _, err := c.GetContact(ctx, ""); return err }(),
		"delete contact": c.DeleteContact(ctx, ""),
		"retry delivery": c.RetryDelivery(ctx, "17", ""),
		"rotate":         func() error { _, err := c.RotateWebhookSecret(ctx, ""); return err }(),
	}
	for name, err := range calls {
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", name, err)
		}
	}
	if f.TotalHits() != 0 {
		t.Errorf("server hits = %d, want 0", f.TotalHits())
	}
}
