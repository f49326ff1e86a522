package workspace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"
)

// TestRetries checks which failures are retried for which calls, by the
// exact number of requests the server receives. MaxRetries is 3, so a
// failure that never ends costs 4 requests when retried, 1 when not.
func TestRetries(t *testing.T) {
	ctx := context.Background()
	get := func(c *Client) error { _, err := c.GetContact(ctx, "c_1"); return err }
	patch := func(c *Client) error {
		_, err := c.UpdateContact(ctx, "c_1", ContactPatch{DefaultFields: &DefaultFieldsPatch{Role: Some("CTO")}})
		return err
	}
	del := func(c *Client) error { return c.DeleteContact(ctx, "c_1") }
	list := func(c *Client) error { _, err := c.ListContacts(ctx, ListContactsParams{}); return err }
	create := func(c *Client) error {
		_, err := c.CreateContact(ctx, ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}, ExternalID: "x1"})
		return err
	}
	createWebhook := func(c *Client) error {
		_, err := c.CreateWebhook(ctx, WebhookCreate{URL: "https://hooks.example/x", Events: []string{EventContactUpdated}})
		return err
	}
	rotate := func(c *Client) error { _, err := c.RotateWebhookSecret(ctx, "17"); return err }
	retryDelivery := func(c *Client) error { return c.RetryDelivery(ctx, "17", "ev_1") }
	testEvent := func(c *Client) error { return c.SendTestEvent(ctx, "17") }

	ok := allRoutes()
	s500, s503, s429 := status(http.StatusInternalServerError), status(http.StatusServiceUnavailable), status(http.StatusTooManyRequests)
	hang := func(w http.ResponseWriter, r *http.Request) { hangUp(t, w) }

	tests := []struct {
		name     string
		route    string
		call     func(*Client) error
		steps    []http.HandlerFunc // answers in order; the last repeats
		wantHits int
		wantErr  func(error) bool // nil: success
		unknown  bool             // the error wraps ErrOutcomeUnknown
	}{
		{name: "get 500 then ok", route: RouteGetContact, call: get, steps: []http.HandlerFunc{s500, s500, ok[RouteGetContact]}, wantHits: 3},
		{name: "get 500 forever", route: RouteGetContact, call: get, steps: []http.HandlerFunc{s500}, wantHits: 4, wantErr: IsTransient},
		{name: "get 429 then ok", route: RouteGetContact, call: get, steps: []http.HandlerFunc{s429, ok[RouteGetContact]}, wantHits: 2},
		{name: "get 429 forever", route: RouteGetContact, call: get, steps: []http.HandlerFunc{s429}, wantHits: 4, wantErr: IsRateLimited},
		{name: "get connection closed then ok", route: RouteGetContact, call: get, steps: []http.HandlerFunc{hang, ok[RouteGetContact]}, wantHits: 2},
		{name: "get 404 not retried", route: RouteGetContact, call: get, steps: []http.HandlerFunc{status(404)}, wantHits: 1, wantErr: IsNotFound},
		{name: "get 401 not retried", route: RouteGetContact, call: get, steps: []http.HandlerFunc{status(401)}, wantHits: 1, wantErr: IsUnauthorized},
		{name: "list 503 then ok", route: RouteListContacts, call: list, steps: []http.HandlerFunc{s503, ok[RouteListContacts]}, wantHits: 2},
		{name: "patch 503 then ok", route: RouteUpdateContact, call: patch, steps: []http.HandlerFunc{s503, ok[RouteUpdateContact]}, wantHits: 2},
		{name: "patch connection closed forever", route: RouteUpdateContact, call: patch, steps: []http.HandlerFunc{hang}, wantHits: 4, wantErr: IsTransient},
		{name: "patch 429 then ok", route: RouteUpdateContact, call: patch, steps: []http.HandlerFunc{s429, ok[RouteUpdateContact]}, wantHits: 2},
		{name: "patch 400 not retried", route: RouteUpdateContact, call: patch, steps: []http.HandlerFunc{status(400)}, wantHits: 1, wantErr: IsValidation},
		{name: "delete 500 then ok", route: RouteDeleteContact, call: del, steps: []http.HandlerFunc{s500, ok[RouteDeleteContact]}, wantHits: 2},
		{name: "delete connection closed then ok", route: RouteDeleteContact, call: del, steps: []http.HandlerFunc{hang, hang, ok[RouteDeleteContact]}, wantHits: 3},
		{name: "delete 429 then ok", route: RouteDeleteContact, call: del, steps: []http.HandlerFunc{s429, ok[RouteDeleteContact]}, wantHits: 2},
		// Creates: a 5xx or a lost answer may hide an applied write.
		{name: "create 500 not retried", route: RouteCreateContact, call: create, steps: []http.HandlerFunc{s500, ok[RouteCreateContact]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "create connection closed not retried", route: RouteCreateContact, call: create, steps: []http.HandlerFunc{hang, ok[RouteCreateContact]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "create 429 retried", route: RouteCreateContact, call: create, steps: []http.HandlerFunc{s429, s429, ok[RouteCreateContact]}, wantHits: 3},
		{name: "create 429 forever", route: RouteCreateContact, call: create, steps: []http.HandlerFunc{s429}, wantHits: 4, wantErr: IsRateLimited},
		{name: "create 422 refused", route: RouteCreateContact, call: create, steps: []http.HandlerFunc{status(422)}, wantHits: 1, wantErr: IsValidation},
		{name: "create webhook 502 not retried", route: RouteCreateWebhook, call: createWebhook, steps: []http.HandlerFunc{status(502), ok[RouteCreateWebhook]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "create webhook 429 retried", route: RouteCreateWebhook, call: createWebhook, steps: []http.HandlerFunc{s429, ok[RouteCreateWebhook]}, wantHits: 2},
		// Other POSTs change state too: rotate, retry a delivery, test event.
		{name: "rotate 500 not retried", route: RouteRotateWebhookSecret, call: rotate, steps: []http.HandlerFunc{s500, ok[RouteRotateWebhookSecret]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "rotate connection closed not retried", route: RouteRotateWebhookSecret, call: rotate, steps: []http.HandlerFunc{hang, ok[RouteRotateWebhookSecret]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "retry delivery 503 not retried", route: RouteRetryDelivery, call: retryDelivery, steps: []http.HandlerFunc{s503, ok[RouteRetryDelivery]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "test event connection closed not retried", route: RouteSendTestEvent, call: testEvent, steps: []http.HandlerFunc{hang, ok[RouteSendTestEvent]},
			wantHits: 1, wantErr: IsTransient, unknown: true},
		{name: "test event 429 retried", route: RouteSendTestEvent, call: testEvent, steps: []http.HandlerFunc{s429, ok[RouteSendTestEvent]}, wantHits: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{tc.route: sequence(tc.steps...)})
			opts := testClientOptions(t, f.URL)
			opts.MaxRetries = 3
			c := newTestClient(t, opts)
			err := tc.call(c)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("err = %v, want success", err)
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("err = %v, does not match the expected kind", err)
			}
			if got := errors.Is(err, ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("errors.Is(err, ErrOutcomeUnknown) = %v, want %v (err %v)", got, tc.unknown, err)
			}
			if got := f.Hits(tc.route); got != tc.wantHits {
				t.Errorf("server hits = %d, want %d", got, tc.wantHits)
			}
			if got := c.Calls(); got != int64(tc.wantHits) {
				t.Errorf("Calls() = %d, want %d", got, tc.wantHits)
			}
		})
	}
}

// TestCreateAnswerLost covers the dangerous case: the service applied the
// create, and the answer never arrived whole. The caller must learn that
// the outcome is unknown, and the create must not be sent again.
func TestCreateAnswerLost(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
	}{
		{"connection closed before the answer", func(w http.ResponseWriter, r *http.Request) { hangUp(t, w) }},
		{"answer cut short", func(w http.ResponseWriter, r *http.Request) {
			hj, _ := w.(http.Hijacker)
			conn, buf, err := hj.Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"data\":{\"id\":\"c_")
			_ = buf.Flush()
			_ = conn.Close()
		}},
		{"answer not json", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "<html>created</html>")
		}},
		{"answer without an id", func(w http.ResponseWriter, r *http.Request) { writeData(w, http.StatusCreated, map[string]any{}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var applied []string
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteCreateContact: func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				applied = append(applied, string(body)) // the write is applied
				mu.Unlock()
				tc.answer(w, r)
			}})
			c := newTestClient(t, testClientOptions(t, f.URL))
			_, err := c.CreateContact(context.Background(), ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}, ExternalID: "x1"})
			if !errors.Is(err, ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
			}
			var ae *APIError
			if errors.As(err, &ae) {
				t.Errorf("a lost answer reads as a refusal: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(applied) != 1 || f.TotalHits() != 1 {
				t.Errorf("create sent %d times (%d hits), want once", len(applied), f.TotalHits())
			}
		})
	}
}

// TestDialFailureIsNotOutcomeUnknown: a connection that could not be made
// carried nothing, so even a create is retried and its error is a plain
// transport failure.
func TestDialFailureIsNotOutcomeUnknown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var attempts []RequestInfo
	var mu sync.Mutex
	opts := testClientOptions(t, "http://"+addr)
	opts.MaxRetries = 2
	opts.Observer = func(ri RequestInfo) { mu.Lock(); attempts = append(attempts, ri); mu.Unlock() }
	c := newTestClient(t, opts)
	_, err = c.CreateContact(context.Background(), ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}})
	if err == nil || errors.Is(err, ErrOutcomeUnknown) || !IsTransient(err) {
		t.Fatalf("err = %v, want a transient error with a known outcome", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 3 {
		t.Fatalf("attempts = %d, want 3", len(attempts))
	}
	for i, a := range attempts {
		if a.Status != 0 || a.Err == nil || a.Attempt != i+1 || a.Route != RouteCreateContact || a.Method != "POST" {
			t.Errorf("attempt %d: %+v", i, a)
		}
	}
}

func TestObserverSeesEveryAttempt(t *testing.T) {
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteUpdateContact: sequence(
		status(http.StatusTooManyRequests), status(http.StatusBadGateway), allRoutes()[RouteUpdateContact])})
	var mu sync.Mutex
	var got []RequestInfo
	opts := testClientOptions(t, f.URL)
	opts.Observer = func(ri RequestInfo) { mu.Lock(); got = append(got, ri); mu.Unlock() }
	c := newTestClient(t, opts)
	if _, err := c.UpdateContact(context.Background(), "c_9", ContactPatch{DefaultFields: &DefaultFieldsPatch{Role: Some("x")}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []struct {
		status int
		err    bool
	}{{429, true}, {502, true}, {200, false}}
	if len(got) != len(want) {
		t.Fatalf("observed %d attempts, want %d", len(got), len(want))
	}
	for i, w := range want {
		ri := got[i]
		if ri.Status != w.status || (ri.Err != nil) != w.err || ri.Attempt != i+1 ||
			ri.Route != RouteUpdateContact || ri.Method != http.MethodPatch || ri.Duration <= 0 {
			t.Errorf("attempt %d = %+v, want status %d", i+1, ri, w.status)
		}
	}
}

// TestKeyNeverLogged runs failing calls with debug logging and checks the
// log and the errors for the key.
func TestKeyNeverLogged(t *testing.T) {
	f := newFakeAPI(t, map[string]http.HandlerFunc{
		RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, "slow down, "+r.Header.Get("Authorization"))
		},
		RouteCreateContact: func(w http.ResponseWriter, r *http.Request) { hangUp(t, w) },
	})
	var buf bytes.Buffer
	var mu sync.Mutex
	log := logrus.New()
	log.SetLevel(logrus.TraceLevel)
	log.SetOutput(lockedWriter{&mu, &buf})
	opts := testClientOptions(t, f.URL)
	opts.Log = logrus.NewEntry(log)
	opts.MaxRetries = 2
	c := newTestClient(t, opts)
	_, err1 := c.GetContact(context.Background(), "c_1")
	_, err2 := c.CreateContact(context.Background(), ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}})
	mu.Lock()
	defer mu.Unlock()
	if buf.Len() == 0 {
		t.Error("nothing was logged; the test checks nothing")
	}
	for _, s := range []string{buf.String(), err1.Error(), err2.Error()} {
		if strings.Contains(s, opts.APIKey) {
			t.Errorf("key leaked into %q", s)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
