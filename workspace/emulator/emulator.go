package emulator

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/workspace"
)

// ServiceName is the service's own name: a reserved source and a reserved
// source prefix.
const ServiceName = "openphone"

// Defaults of Options.
const (
	DefaultAPIKey          = "emulator-key"
	DefaultFaultLatency    = 300 * time.Millisecond
	DefaultRetryBase       = 100 * time.Millisecond
	DefaultRetryMax        = 10 * time.Second
	DefaultMaxAttempts     = 8
	DefaultRotationGrace   = 24 * time.Hour
	DefaultDeliveryTimeout = 5 * time.Second
	DefaultHistoryLimit    = 10000
	DefaultDocsURL         = "https://docs.workspace.invalid/api/errors"
	DefaultOrgName         = "Emulated Workspace"
)

// Options configure an Emulator. Zero fields take the defaults.
type Options struct {
	// APIKey is the key with every right (DefaultAPIKey when empty);
	// ReadOnlyKey, when set, may read but its writes get 403.
	APIKey      string
	ReadOnlyKey string
	// VersionHeader and Version: the header required on webhook
	// operations (workspace.DefaultVersionHeader, workspace.DefaultVersion).
	VersionHeader string
	Version       string
	// Rate (requests per second, workspace.DefaultRateLimit) and Burst
	// (workspace.DefaultBurst) of each API key's token bucket; a negative
	// Rate disables the limit.
	Rate  float64
	Burst int
	// RetryAfter adds a Retry-After header (whole seconds) to the 429 of
	// the rate limit; the public service sends none.
	RetryAfter bool
	// FaultRate is the probability, in [0,1], that an authenticated API
	// request meets a fault, split evenly among a 500, a 429, a latency of
	// FaultLatency (DefaultFaultLatency) and a lost answer (the request is
	// applied, then the connection is closed without an answer).
	FaultRate    float64
	FaultLatency time.Duration
	// Latency is added to every API request.
	Latency time.Duration
	// Seed makes faults, ids and secrets reproducible.
	Seed int64
	// CustomFields are the workspace's custom field definitions (made in
	// the product's app only, so taken from configuration).
	CustomFields []workspace.CustomFieldDefinition
	// CustomFieldValues is the form of custom field values the API takes
	// and answers: workspace.ValuesTyped (typed by the field's type, as the
	// published OpenAPI document has them) or workspace.ValuesArrays (every
	// value an array of strings, as the spec). Empty means
	// $SYNCD_TEST_CUSTOM_FIELD_VALUES when that is set (so that a test
	// suite runs in either form), else typed.
	CustomFieldValues string
	// OrganizationName names the organization (DefaultOrgName).
	OrganizationName string
	// Webhook deliveries: a failed attempt is retried after RetryBase
	// (DefaultRetryBase), doubling up to RetryMax (DefaultRetryMax), for
	// at most MaxAttempts attempts (DefaultMaxAttempts). After a rotation
	// the previous secret keeps signing for RotationGrace
	// (DefaultRotationGrace). Each attempt times out after DeliveryTimeout.
	RetryBase       time.Duration
	RetryMax        time.Duration
	MaxAttempts     int
	RotationGrace   time.Duration
	DeliveryTimeout time.Duration
	// LegacySignature also signs deliveries with the older
	// openphone-signature header.
	LegacySignature bool
	// WebhookEnvelope is where deliveries carry the contact: EnvelopeObject
	// (the default: data.object, as the service's webhook guide shows) or
	// EnvelopeResource (data.resource, the shape of earlier emulators,
	// kept for the tests that keep syncd reading it).
	WebhookEnvelope string
	// WebhookRoutes is which form of the webhook routes is served:
	// RoutesBoth (the default), RoutesSpec (/webhooks..., as the spec
	// writes them) or RoutesV1 (/v1/webhooks..., as the published OpenAPI
	// document has them). The other form answers 404.
	WebhookRoutes string
	// NoOrganization answers 404 on GET /v1/organization and GET
	// /organization, as versions of the service without that route do.
	NoOrganization bool
	// Users are the workspace's users (GET /v1/users/{userId}); calls
	// and texts name them by userId.
	Users []workspace.User
	// WebhookDuplicates is the share, in [0,1], of events delivered twice
	// (the same webhook-id, two deliveries), as at-least-once services do.
	WebhookDuplicates float64
	// HistoryLimit bounds the delivery history kept per webhook.
	HistoryLimit int
	// HTTPClient sends deliveries (default: a plain client).
	HTTPClient *http.Client
	// DocsURL is the docs field of error bodies.
	DocsURL string
	// Now is the clock of timestamps (time.Now when nil).
	Now func() time.Time
	// Log receives delivery failures and faults (discarded when nil).
	Log logrus.FieldLogger
}

// TestValuesEnv names the environment variable that chooses the form of
// custom field values of emulators whose options leave it empty.
const TestValuesEnv = "SYNCD_TEST_CUSTOM_FIELD_VALUES"

// TestCustomFieldValues is the form test suites run in: the value of
// TestValuesEnv when it names one, else workspace.ValuesTyped.
func TestCustomFieldValues() string {
	if f := os.Getenv(TestValuesEnv); workspace.ValidValueForm(f) {
		return f
	}
	return workspace.ValuesTyped
}

// Values of Options.WebhookEnvelope.
const (
	EnvelopeObject   = "object"
	EnvelopeResource = "resource"
)

// Values of Options.WebhookRoutes.
const (
	RoutesBoth = "both"
	RoutesSpec = workspace.WebhookRoutesSpec
	RoutesV1   = workspace.WebhookRoutesV1
)

func (o Options) withDefaults() Options {
	if o.WebhookEnvelope == "" {
		o.WebhookEnvelope = EnvelopeObject
	}
	if o.WebhookRoutes == "" {
		o.WebhookRoutes = RoutesBoth
	}
	if o.CustomFieldValues == "" {
		o.CustomFieldValues = TestCustomFieldValues()
	}
	if o.APIKey == "" {
		o.APIKey = DefaultAPIKey
	}
	if o.VersionHeader == "" {
		o.VersionHeader = workspace.DefaultVersionHeader
	}
	if o.Version == "" {
		o.Version = workspace.DefaultVersion
	}
	if o.Rate == 0 {
		o.Rate = workspace.DefaultRateLimit
	}
	if o.Burst <= 0 {
		o.Burst = workspace.DefaultBurst
	}
	if o.FaultLatency <= 0 {
		o.FaultLatency = DefaultFaultLatency
	}
	if o.OrganizationName == "" {
		o.OrganizationName = DefaultOrgName
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RotationGrace <= 0 {
		o.RotationGrace = DefaultRotationGrace
	}
	if o.DeliveryTimeout <= 0 {
		o.DeliveryTimeout = DefaultDeliveryTimeout
	}
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.DocsURL == "" {
		o.DocsURL = DefaultDocsURL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		o.Log = l
	}
	return o
}

// Emulator is the in-memory service. Its methods are safe for concurrent use.
type Emulator struct {
	opts    Options
	handler http.Handler
	created time.Time

	mu    sync.Mutex // guards the state below
	state *state

	statsMu sync.Mutex
	stats   Stats

	faultMu   sync.Mutex
	faultRand *rand.Rand
	faultRate float64

	latency atomic.Int64 // Options.Latency, changed by SetLatency

	limMu    sync.Mutex
	limiters map[string]*rate.Limiter

	deliver *deliverer
}

// New returns an Emulator; serve it with Handler, and Close it to stop
// its delivery goroutines.
func New(opts Options) *Emulator {
	opts = opts.withDefaults()
	e := &Emulator{opts: opts, created: opts.Now().UTC().Truncate(time.Millisecond)}
	e.latency.Store(int64(opts.Latency))
	e.resetLocked()
	e.deliver = newDeliverer(e)
	e.handler = e.routes()
	return e
}

// Handler returns the emulator's http.Handler: the API and the back door.
func (e *Emulator) Handler() http.Handler { return e.handler }

// Options returns the options in effect, defaults applied.
func (e *Emulator) Options() Options { return e.opts }

// Close stops the delivery goroutines and waits for them; pending retries
// are dropped.
func (e *Emulator) Close() { e.deliver.close() }

// SetFaultRate changes the probability of faults at run time.
func (e *Emulator) SetFaultRate(p float64) {
	e.faultMu.Lock()
	e.faultRate = clamp01(p)
	e.faultMu.Unlock()
}

// SetLatency changes the latency added to every API request (a service
// slow for a while).
func (e *Emulator) SetLatency(d time.Duration) { e.latency.Store(int64(d)) }

// FaultRate returns the current probability of faults.
func (e *Emulator) FaultRate() float64 {
	e.faultMu.Lock()
	defer e.faultMu.Unlock()
	return e.faultRate
}

// Reset forgets every contact, webhook, delivery, counter and rate limit
// state, and restarts the seeded random sequences and the fault rate of
// the options, as a new emulator would.
func (e *Emulator) Reset() {
	e.deliver.drop()
	e.mu.Lock()
	e.faultMu.Lock()
	e.statsMu.Lock()
	e.limMu.Lock()
	e.resetLocked()
	e.limMu.Unlock()
	e.statsMu.Unlock()
	e.faultMu.Unlock()
	e.mu.Unlock()
}

// resetLocked sets the initial state; every lock is held (or the
// emulator is not yet shared).
func (e *Emulator) resetLocked() {
	e.state = newState(e.opts.Seed)
	e.stats = Stats{Requests: map[string]int{}, FaultsByKind: map[string]int{}}
	e.faultRand = rand.New(rand.NewSource(e.opts.Seed ^ 0x5eed_fa17))
	e.faultRate = clamp01(e.opts.FaultRate)
	e.limiters = map[string]*rate.Limiter{}
}

// orgID is the organization's id, and the orgId of webhooks.
func (e *Emulator) orgID() string { return fmt.Sprintf("OR%010d", uint64(e.opts.Seed)%1e10) }

// now is the clock, in UTC, truncated to the millisecond like the
// service's timestamps.
func (e *Emulator) now() time.Time { return e.opts.Now().UTC().Truncate(time.Millisecond) }

func clamp01(p float64) float64 {
	switch {
	case p < 0:
		return 0
	case p > 1:
		return 1
	}
	return p
}

// Stats counts the API requests that reached the emulator.
type Stats struct {
	// Requests by "METHOD /route/{template}", every API request that
	// reached the emulator, whatever its answer (throttled ones included).
	Requests map[string]int `json:"requests"`
	// Throttled counts the 429s of the rate limit (not injected ones).
	Throttled int `json:"throttled"`
	// Faults counts injected faults, FaultsByKind by kind (500, 429,
	// latency, lost).
	Faults       int            `json:"faults"`
	FaultsByKind map[string]int `json:"faultsByKind"`
	// MissingVersion counts API requests without the version header.
	MissingVersion int `json:"missingVersion"`
}

// Stats returns a copy of the counters.
func (e *Emulator) Stats() Stats {
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	s := e.stats
	s.Requests = make(map[string]int, len(e.stats.Requests))
	for k, v := range e.stats.Requests {
		s.Requests[k] = v
	}
	s.FaultsByKind = make(map[string]int, len(e.stats.FaultsByKind))
	for k, v := range e.stats.FaultsByKind {
		s.FaultsByKind[k] = v
	}
	return s
}

// Contacts returns every contact, in creation order.
func (e *Emulator) Contacts() []workspace.Contact {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]workspace.Contact, 0, e.state.live)
	for _, r := range e.state.order {
		if !r.deleted {
			out = append(out, cloneContact(r.c))
		}
	}
	return out
}

// Webhooks returns every webhook subscription (without secrets).
func (e *Emulator) Webhooks() []workspace.Webhook {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]workspace.Webhook, 0, len(e.state.webhookOrder))
	for _, id := range e.state.webhookOrder {
		out = append(out, e.state.webhooks[id].public())
	}
	return out
}

// Deliveries returns the delivery history of the webhook with id, oldest
// first (nil when there is no such webhook).
func (e *Emulator) Deliveries(webhookID string) []workspace.Delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh := e.state.webhooks[webhookID]
	if wh == nil {
		return nil
	}
	return wh.history()
}
