package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// allRoutes answers every route the client calls with a plausible body.
func allRoutes() map[string]http.HandlerFunc {
	contact := func(w http.ResponseWriter, r *http.Request) {
		writeData(w, http.StatusOK, Contact{ID: r.PathValue("id"), DefaultFields: DefaultFields{FirstName: ptr("Ada")}})
	}
	webhook := func(w http.ResponseWriter, r *http.Request) {
		writeData(w, http.StatusOK, Webhook{ID: r.PathValue("id"), URL: "https://hooks.example/x", Status: WebhookEnabled})
	}
	noContent := func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }
	return map[string]http.HandlerFunc{
		RouteCreateContact: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusCreated, Contact{ID: "c_new", DefaultFields: DefaultFields{FirstName: ptr("Ada")}})
		},
		RouteGetContact:    contact,
		RouteUpdateContact: contact,
		RouteDeleteContact: noContent,
		RouteListContacts: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, ContactPage{Data: []Contact{{ID: "c_1"}}, TotalItems: 1})
		},
		RouteCustomFields: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusOK, []CustomFieldDefinition{{Name: "Tier", Key: "tier", Type: "string"}})
		},
		RouteOrganization: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusOK, Organization{ID: "org_1", Name: "Acme", SubscriptionStatus: "active"})
		},
		RouteCreateWebhook: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusCreated, Webhook{ID: "17", URL: "https://hooks.example/x", Key: "whsec_c2VjcmV0"})
		},
		RouteListWebhooks: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusOK, []Webhook{{ID: "17"}, {ID: "18"}})
		},
		RouteGetWebhook:    webhook,
		RouteUpdateWebhook: webhook,
		RouteDeleteWebhook: noContent,
		RouteRotateWebhookSecret: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusOK, SigningSecret{Key: "whsec_bmV3"})
		},
		RouteWebhookDeliveries: func(w http.ResponseWriter, r *http.Request) {
			writeData(w, http.StatusOK, []Delivery{{ID: "d_1", WebhookID: r.PathValue("id"), EventID: "ev_1", Status: "delivered", Attempts: 2}})
		},
		RouteRetryDelivery: func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusAccepted, map[string]any{}) },
		RouteSendTestEvent: func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]any{}) },
	}
}

func ptr[T any](v T) *T { return &v }

// apiCall is one client operation, run for its side effects and checked
// by check (which sees the decoded answer).
type apiCall struct {
	name  string
	route string
	path  string // path the server must see
	body  bool   // the request carries a JSON body
	run   func(ctx context.Context, c *Client) (any, error)
	check func(t *testing.T, got any)
}

func allCalls() []apiCall {
	return []apiCall{
		{name: "create contact", route: RouteCreateContact, path: "/v1/contacts", body: true,
			run: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateContact(ctx, ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}, ExternalID: "x1", Source: "custom-test"})
			},
			check: func(t *testing.T, got any) {
				if ct := got.(Contact); ct.ID != "c_new" || ct.DefaultFields.FirstName == nil || *ct.DefaultFields.FirstName != "Ada" {
					t.Errorf("contact = %+v", ct)
				}
			}},
		{name: "get contact", route: RouteGetContact, path: "/v1/contacts/c%2F1",
			run: func(ctx context.Context, c *Client) (any, error) { return c.GetContact(ctx, "c/1") },
			check: func(t *testing.T, got any) {
				if ct := got.(Contact); ct.ID != "c/1" {
					t.Errorf("id = %q, want the escaped id decoded by the server", ct.ID)
				}
			}},
		{name: "update contact", route: RouteUpdateContact, path: "/v1/contacts/c_1", body: true,
			run: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateContact(ctx, "c_1", ContactPatch{Source: Some("custom-test")})
			}},
		{name: "delete contact", route: RouteDeleteContact, path: "/v1/contacts/c_1",
			run: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteContact(ctx, "c_1") }},
		{name: "list contacts", route: RouteListContacts, path: "/v1/contacts",
			run: func(ctx context.Context, c *Client) (any, error) { return c.ListContacts(ctx, ListContactsParams{}) },
			check: func(t *testing.T, got any) {
				if p := got.(ContactPage); len(p.Data) != 1 || p.NextPageToken != nil {
					t.Errorf("page = %+v", p)
				}
			}},
		{name: "custom field definitions", route: RouteCustomFields, path: "/v1/contact-custom-fields",
			run: func(ctx context.Context, c *Client) (any, error) { return c.CustomFieldDefinitions(ctx) },
			check: func(t *testing.T, got any) {
				if d := got.([]CustomFieldDefinition); len(d) != 1 || d[0].Key != "tier" {
					t.Errorf("definitions = %+v", d)
				}
			}},
		{name: "organization", route: RouteOrganization, path: "/v1/organization",
			run: func(ctx context.Context, c *Client) (any, error) { return c.Organization(ctx) },
			check: func(t *testing.T, got any) {
				if o := got.(Organization); o.Name != "Acme" {
					t.Errorf("organization = %+v", o)
				}
			}},
		{name: "create webhook", route: RouteCreateWebhook, path: "/webhooks", body: true,
			run: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateWebhook(ctx, WebhookCreate{URL: "https://hooks.example/x", Events: []string{EventContactUpdated}})
			},
			check: func(t *testing.T, got any) {
				if w := got.(Webhook); w.ID != "17" || w.Key != "whsec_c2VjcmV0" {
					t.Errorf("webhook = %+v", w)
				}
			}},
		{name: "list webhooks", route: RouteListWebhooks, path: "/webhooks",
			run: func(ctx context.Context, c *Client) (any, error) { return c.ListWebhooks(ctx) },
			check: func(t *testing.T, got any) {
				if w := got.([]Webhook); len(w) != 2 {
					t.Errorf("webhooks = %+v", w)
				}
			}},
		{name: "get webhook", route: RouteGetWebhook, path: "/webhooks/17",
			run: func(ctx context.Context, c *Client) (any, error) { return c.GetWebhook(ctx, "17") }},
		{name: "update webhook", route: RouteUpdateWebhook, path: "/webhooks/17", body: true,
			run: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateWebhook(ctx, "17", WebhookPatch{Status: Some(WebhookDisabled)})
			}},
		{name: "delete webhook", route: RouteDeleteWebhook, path: "/webhooks/17",
			run: func(ctx context.Context, c *Client) (any, error) { return nil, c.DeleteWebhook(ctx, "17") }},
		{name: "rotate webhook secret", route: RouteRotateWebhookSecret, path: "/webhooks/17/rotate",
			run: func(ctx context.Context, c *Client) (any, error) { return c.RotateWebhookSecret(ctx, "17") },
			check: func(t *testing.T, got any) {
				if s := got.(SigningSecret); s.Key != "whsec_bmV3" {
					t.Errorf("secret = %+v", s)
				}
			}},
		{name: "webhook deliveries", route: RouteWebhookDeliveries, path: "/webhooks/17/events",
			run: func(ctx context.Context, c *Client) (any, error) { return c.WebhookDeliveries(ctx, "17") },
			check: func(t *testing.T, got any) {
				if d := got.([]Delivery); len(d) != 1 || d[0].WebhookID != "17" || d[0].Attempts != 2 {
					t.Errorf("deliveries = %+v", d)
				}
			}},
		{name: "retry delivery", route: RouteRetryDelivery, path: "/webhooks/17/events/ev_1/retry",
			run: func(ctx context.Context, c *Client) (any, error) { return nil, c.RetryDelivery(ctx, "17", "ev_1") }},
		{name: "send test event", route: RouteSendTestEvent, path: "/webhooks/17/events/test",
			run: func(ctx context.Context, c *Client) (any, error) { return nil, c.SendTestEvent(ctx, "17") }},
	}
}

func TestClientSendsHeadersOnEveryCall(t *testing.T) {
	for _, tc := range allCalls() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, allRoutes())
			opts := testClientOptions(t, f.URL)
			c := newTestClient(t, opts)
			got, err := tc.run(context.Background(), c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			reqs := f.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Route != tc.route {
				t.Errorf("route = %q, want %q", r.Route, tc.route)
			}
			if r.Path != tc.path {
				t.Errorf("path = %q, want %q", r.Path, tc.path)
			}
			if got := r.Header.Get("Authorization"); got != opts.APIKey {
				t.Errorf("Authorization = %q, want the raw key", got)
			}
			if got := r.Header.Get(DefaultVersionHeader); got != DefaultVersion {
				t.Errorf("%s = %q, want %q", DefaultVersionHeader, got, DefaultVersion)
			}
			if got := r.Header.Get("User-Agent"); !strings.HasPrefix(got, "syncd/") {
				t.Errorf("User-Agent = %q, want syncd/<version>", got)
			}
			ct := r.Header.Get("Content-Type")
			switch {
			case tc.body && ct != "application/json":
				t.Errorf("Content-Type = %q with a body, want application/json", ct)
			case tc.body && !json.Valid(r.Body):
				t.Errorf("body is not JSON: %q", r.Body)
			case !tc.body && (ct != "" || len(r.Body) != 0):
				t.Errorf("request without body has Content-Type %q and body %q", ct, r.Body)
			}
			if c.Calls() != 1 {
				t.Errorf("Calls() = %d, want 1", c.Calls())
			}
		})
	}
}

func TestClientVersionHeaderConfigurable(t *testing.T) {
	f := newFakeAPI(t, allRoutes())
	opts := testClientOptions(t, f.URL)
	opts.VersionHeader, opts.Version = "Brand-Api-Version", "2099-01-01"
	opts.UserAgent = "syncd/1.2.3"
	c := newTestClient(t, opts)
	if _, err := c.ListWebhooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := f.Requests()[0].Header
	if got := h.Get("Brand-Api-Version"); got != "2099-01-01" {
		t.Errorf("Brand-Api-Version = %q", got)
	}
	if got := h.Get(DefaultVersionHeader); got != "" {
		t.Errorf("default header still sent: %q", got)
	}
	if got := h.Get("User-Agent"); got != "syncd/1.2.3" {
		t.Errorf("User-Agent = %q", got)
	}
}

func TestPatchSendsOnlySetFields(t *testing.T) {
	f := newFakeAPI(t, allRoutes())
	c := newTestClient(t, testClientOptions(t, f.URL))
	p := ContactPatch{
		ExternalID:    Null[string](),
		DefaultFields: &DefaultFieldsPatch{LastName: Some("Lovelace"), Emails: []ItemPatch{{ID: "e1", Value: nil}}},
	}
	if _, err := c.UpdateContact(context.Background(), "c_1", p); err != nil {
		t.Fatal(err)
	}
	want := `{"externalId":null,"defaultFields":{"lastName":"Lovelace","emails":[{"id":"e1","value":null}]}}`
	if got := string(f.Requests()[0].Body); got != want {
		t.Errorf("body = %s\nwant   %s", got, want)
	}
}

func TestNewClientValidation(t *testing.T) {
	const key = "very-secret-key"
	tests := []struct {
		name string
		opts ClientOptions
	}{
		{"no base url", ClientOptions{APIKey: key}},
		{"relative base url", ClientOptions{BaseURL: "api.example.com", APIKey: key}},
		{"ftp base url", ClientOptions{BaseURL: "ftp://api.example.com", APIKey: key}},
		{"base url with query", ClientOptions{BaseURL: "https://api.example.com?x=1", APIKey: key}},
		{"no api key", ClientOptions{BaseURL: "https://api.example.com"}},
		{"negative rate", ClientOptions{BaseURL: "https://api.example.com", APIKey: key, RateLimit: -1}},
		{"negative burst", ClientOptions{BaseURL: "https://api.example.com", APIKey: key, Burst: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(tc.opts)
			if err == nil {
				t.Fatal("NewClient accepted the options")
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

func TestNewClientDefaults(t *testing.T) {
	c, err := NewClient(ClientOptions{BaseURL: "https://defaults.example/", APIKey: uniqueKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Limiter().Limit(); got != DefaultRateLimit {
		t.Errorf("limit = %v, want %v", got, DefaultRateLimit)
	}
	if got, want := c.Limiter().Burst(), DefaultBurst-1; got != want { // jitter headroom: 10/s x 100 ms
		t.Errorf("burst = %v, want %v", got, want)
	}
	if c.maxRetries != DefaultMaxRetries || c.http.Timeout != DefaultHTTPTimeout {
		t.Errorf("maxRetries %d, timeout %v", c.maxRetries, c.http.Timeout)
	}
	if c.versionHeader != DefaultVersionHeader || c.version != DefaultVersion {
		t.Errorf("version header %s: %s", c.versionHeader, c.version)
	}
	if s := c.String() + (ClientOptions{APIKey: "k-123"}).String(); strings.Contains(s, "k-123") {
		t.Errorf("String leaks the key: %s", s)
	}
}

func TestLimiterSharedPerKey(t *testing.T) {
	key := uniqueKey(t)
	newC := func(base, key string, lim *rate.Limiter) *Client {
		c, err := NewClient(ClientOptions{BaseURL: base, APIKey: key, Limiter: lim, RateLimit: 7, Burst: 3})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := newC("https://shared.example", key, nil)
	b := newC("https://shared.example/", key, nil)
	other := newC("https://shared.example", key+"-other", nil)
	otherHost := newC("https://elsewhere.example", key, nil)
	own := rate.NewLimiter(1, 1)
	d := newC("https://shared.example", key, own)
	e := newC("https://elsewhere.example", uniqueKey(t), own)

	if a.Limiter() != b.Limiter() {
		t.Error("two clients of one key have different limiters")
	}
	if a.gate != b.gate {
		t.Error("two clients of one key have different pause gates")
	}
	if a.Limiter() == other.Limiter() || a.Limiter() == otherHost.Limiter() {
		t.Error("clients of different keys or hosts share a limiter")
	}
	if d.Limiter() != own || e.Limiter() != own || d.gate != e.gate {
		t.Error("a limiter passed in options is not used, or its gate not shared")
	}
	if a.Limiter().Limit() != 7 || a.Limiter().Burst() != 2 { // jitter headroom: 7/s x 100 ms, rounded up
		t.Errorf("limit %v burst %d, want 7 and 2", a.Limiter().Limit(), a.Limiter().Burst())
	}
}

// TestContextCancel checks that every wait of the client ends with the
// caller's context: the limiter, the shared pause, the backoff, and an
// answer that does not come.
func TestContextCancel(t *testing.T) {
	block := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	retryAfter := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "60")
		status(http.StatusTooManyRequests)(w, r)
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		setup    func(c *Client)
		call     func(ctx context.Context, c *Client) error
		wantHits int
		unknown  bool // the error must wrap ErrOutcomeUnknown
	}{
		{name: "limiter wait", handler: status(http.StatusOK),
			setup: func(c *Client) { c.limiter.SetLimit(0.01); c.limiter.AllowN(time.Now(), c.limiter.Burst()) },
			call:  func(ctx context.Context, c *Client) error { _, err := c.GetContact(ctx, "c_1"); return err }},
		{name: "retry-after pause", handler: retryAfter,
			call:     func(ctx context.Context, c *Client) error { _, err := c.GetContact(ctx, "c_1"); return err },
			wantHits: 1},
		{name: "backoff", handler: status(http.StatusInternalServerError),
			setup:    func(c *Client) { c.backoff = backoff{base: time.Minute, max: time.Minute} },
			call:     func(ctx context.Context, c *Client) error { _, err := c.GetContact(ctx, "c_1"); return err },
			wantHits: 1},
		{name: "answer of a get", handler: block,
			call:     func(ctx context.Context, c *Client) error { _, err := c.GetContact(ctx, "c_1"); return err },
			wantHits: 1},
		{name: "answer of a create", handler: block,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateContact(ctx, ContactCreate{DefaultFields: DefaultFieldsInput{FirstName: "Ada"}})
				return err
			},
			wantHits: 1, unknown: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: tc.handler, RouteCreateContact: tc.handler})
			c := newTestClient(t, testClientOptions(t, f.URL))
			if tc.setup != nil {
				tc.setup(c)
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			err := tc.call(ctx, c)
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("call returned %v after cancel", el)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if IsTransient(err) {
				t.Errorf("a cancelled call is reported transient: %v", err)
			}
			if got := errors.Is(err, ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("outcome unknown = %v, want %v (%v)", got, tc.unknown, err)
			}
			if got := f.TotalHits(); got != tc.wantHits {
				t.Errorf("server hits = %d, want %d", got, tc.wantHits)
			}
		})
	}
}

func TestContextDeadlineShorterThanLimiterWait(t *testing.T) {
	f := newFakeAPI(t, allRoutes())
	opts := testClientOptions(t, f.URL)
	opts.RateLimit, opts.Burst = 0.01, 1
	c := newTestClient(t, opts)
	if _, err := c.GetContact(context.Background(), "c_1"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := c.GetContact(ctx, "c_1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	if f.TotalHits() != 1 {
		t.Errorf("hits = %d, want 1", f.TotalHits())
	}
}
