package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/internal/remote"
)

// Client defaults.
const (
	DefaultMaxRetries  = 5
	DefaultHTTPTimeout = 30 * time.Second

	backoffBase = 250 * time.Millisecond
	backoffMax  = 10 * time.Second
	// maxRetryAfter bounds a Retry-After the client honours, so that a
	// broken answer cannot stall every caller of the key for days.
	maxRetryAfter = 10 * time.Minute
	// maxBodySize bounds the answer the client reads.
	maxBodySize = 16 << 20
)

// ClientOptions configure a Client. Zero fields take the defaults.
type ClientOptions struct {
	// BaseURL is the service's address, e.g. https://api.example.com; the
	// client appends /v1/... and /webhooks/... to it.
	BaseURL string
	// APIKey is sent raw in the Authorization header. It never appears
	// in logs or errors.
	APIKey string
	// VersionHeader and Version name and value of the version header
	// sent on every request (DefaultVersionHeader, DefaultVersion).
	VersionHeader string
	Version       string
	// RateLimit (requests per second, DefaultRateLimit) and Burst
	// (DefaultBurst) are the service's limits for the API key. The key's
	// limiter paces at RateLimit and bursts a little less than Burst
	// (clientBurst), leaving room for network jitter.
	RateLimit float64
	Burst     int
	// Limiter, when set, is used instead of the registry's and RateLimit
	// and Burst are ignored. Otherwise the client uses the process-wide
	// limiter of (BaseURL, APIKey), shared by every client of that key.
	Limiter *rate.Limiter
	// HTTPClient sends the requests; default: a client with a 30 s timeout.
	HTTPClient *http.Client
	// MaxRetries bounds the retries of one call after a 429, a 5xx or a
	// transport failure (DefaultMaxRetries when 0; none when negative).
	MaxRetries int
	// UserAgent is sent as User-Agent; default "syncd/<module version>".
	UserAgent string
	// Log receives debug and info entries; default: the standard logger.
	Log *logrus.Entry
	// Observer, when set, is called after every HTTP attempt (metrics,
	// run statistics). It must not block.
	Observer func(RequestInfo)
	// CustomFieldValues is the form custom field values are written in:
	// ValuesTyped (the default) or ValuesArrays. See EncodeValue.
	CustomFieldValues string
	// WebhookRoutes is the form of the webhook routes when it is known
	// (WebhookRoutesSpec or WebhookRoutesV1, as remembered in state);
	// empty: the client finds it out on its first webhook call.
	WebhookRoutes string
	// WebhookRoutesFound, when set, is called with the form the client
	// found out (to remember it); it runs while other webhook calls wait.
	WebhookRoutesFound func(form string)
}

// String describes the options without the API key.
func (o ClientOptions) String() string {
	return fmt.Sprintf("workspace.ClientOptions{BaseURL: %q, APIKey: [redacted], Version: %q}", o.BaseURL, o.Version)
}

// RequestInfo describes one HTTP attempt, for ClientOptions.Observer:
// method, route template (e.g. "PATCH /v1/contacts/{id}"), status (0 when
// no answer came), duration, the wait on the rate limiter and the shared
// pause, the attempt's number from 1, and its error (nil on a 2xx).
type RequestInfo = remote.Info

// Client calls the workspace API. It is safe for concurrent use; every
// request waits on the API key's shared rate limiter first.
type Client struct {
	baseURL       string
	apiKey        string
	versionHeader string
	version       string
	http          *http.Client
	limiter       *rate.Limiter
	gate          *remote.Gate
	maxRetries    int
	backoff       backoff
	gatePause     time.Duration // fixed brief pause after a 429 (tests); 0: briefPause's rule
	maxRetryAfter time.Duration
	log           *logrus.Entry
	rc            *remote.Client
	fields        customFields // definitions and value form, see client_fields.go
	routes        routeForms   // fallbacks of routes, see client_fallback.go
}

// routeForms are the forms of the routes where versions of the service
// differ.
type routeForms struct {
	noOrganization atomic.Bool // GET /v1/organization answered 404

	mu          sync.Mutex // held while finding the webhook routes out
	webhookForm string
	found       func(form string)
}

// NewClient checks opts and returns a Client.
func NewClient(opts ClientOptions) (*Client, error) {
	if opts.BaseURL == "" {
		return nil, errors.New("new workspace client: base url is required")
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("new workspace client: base url %q: want http(s)://host[/path]", opts.BaseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("new workspace client: base url %q: no query, fragment or user info allowed", opts.BaseURL)
	}
	if opts.APIKey == "" {
		return nil, errors.New("new workspace client: api key is required")
	}
	if opts.RateLimit < 0 || opts.Burst < 0 {
		return nil, errors.New("new workspace client: rate limit and burst must not be negative")
	}
	if opts.CustomFieldValues == "" {
		opts.CustomFieldValues = ValuesTyped
	}
	if opts.WebhookRoutes != "" && !ValidWebhookRoutes(opts.WebhookRoutes) {
		return nil, fmt.Errorf("new workspace client: webhook routes %q: want %s or %s", opts.WebhookRoutes, WebhookRoutesSpec, WebhookRoutesV1)
	}
	if !ValidValueForm(opts.CustomFieldValues) {
		return nil, fmt.Errorf("new workspace client: custom field values %q: want %s or %s", opts.CustomFieldValues, ValuesTyped, ValuesArrays)
	}
	c := &Client{
		baseURL:       strings.TrimRight(opts.BaseURL, "/"),
		apiKey:        opts.APIKey,
		versionHeader: cmp.Or(opts.VersionHeader, DefaultVersionHeader),
		version:       cmp.Or(opts.Version, DefaultVersion),
		http:          cmp.Or(opts.HTTPClient, &http.Client{Timeout: DefaultHTTPTimeout}),
		limiter:       opts.Limiter,
		maxRetries:    opts.MaxRetries,
		backoff:       backoff{base: backoffBase, max: backoffMax},
		maxRetryAfter: maxRetryAfter,
		log:           opts.Log,
		fields:        customFields{form: opts.CustomFieldValues, reloadEvery: reloadEvery},
	}
	c.routes.webhookForm, c.routes.found = opts.WebhookRoutes, opts.WebhookRoutesFound
	if c.limiter == nil {
		limit, burst := opts.RateLimit, opts.Burst
		if limit == 0 {
			limit = DefaultRateLimit
		}
		if burst == 0 {
			burst = DefaultBurst
		}
		c.limiter = remote.SharedLimiter(c.baseURL, c.apiKey, "", rate.Limit(limit), clientBurst(limit, burst))
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.log == nil {
		c.log = logrus.NewEntry(logrus.StandardLogger())
	}
	c.log = c.log.WithField(logfield.Component, "workspace")
	c.rc = remote.New(remote.Options{
		Name:      "workspace api",
		BaseURL:   c.baseURL,
		HTTP:      c.http,
		Auth:      remote.Header("Authorization", c.apiKey),
		Header:    c.headers(opts.UserAgent),
		Limiter:   c.limiter,
		Judge:     c.judge,
		Observer:  opts.Observer,
		Transport: func(route string, err error) error { return &transportError{route: route, err: err} },
		Backoff:   func(n int) time.Duration { return c.backoff.delay(n) },
		// One budget for 429s, 5xx answers and transport failures.
		Budget:     remote.Budget{Retries: c.maxRetries, Shared: true},
		MaxBody:    maxBodySize,
		Log:        c.log,
		RetryLevel: logrus.DebugLevel,
	})
	c.gate = c.rc.Gate()
	return c, nil
}

// headers are the headers of every request but Authorization: the version
// header and User-Agent.
func (c *Client) headers(userAgent string) http.Header {
	h := http.Header{}
	h.Set(c.versionHeader, c.version)
	h.Set("User-Agent", cmp.Or(userAgent, "syncd/"+moduleVersion()))
	return h
}

// String describes the client without the API key.
func (c *Client) String() string { return "workspace.Client(" + c.baseURL + ")" }

// Limiter returns the rate limiter the client waits on; share it with
// anything else that spends the same API key's quota.
func (c *Client) Limiter() *rate.Limiter { return c.limiter }

// Calls returns the number of HTTP attempts made so far, retries included.
func (c *Client) Calls() int64 { return c.rc.Calls() }

// moduleVersion is syncd's version as the Go toolchain recorded it.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
