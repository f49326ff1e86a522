package remote

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// Defaults of Options.
const (
	DefaultMaxBody       = 16 << 20
	DefaultMaxRetryAfter = 10 * time.Minute
)

// DefaultBudget is the Budget of a client that sets none.
var DefaultBudget = Budget{Retries: 5, Waits: 10}

// DefaultBackoff is the backoff of a client that sets none.
var DefaultBackoff = Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second, Jitter: true}

// Budget bounds the repeats of one call.
type Budget struct {
	// Retries bounds the Retry verdicts and transport failures.
	Retries int
	// Waits bounds the Wait verdicts.
	Waits int
	// Shared makes Retries bound Retry and Wait verdicts together
	// (Waits is then unused).
	Shared bool
}

// Options configure a Client. Only Name and BaseURL are required.
type Options struct {
	// Name starts errors ("hubspot", "workspace api").
	Name string
	// BaseURL is prepended to every Request.Path.
	BaseURL string
	// HTTP sends the requests; default: http.DefaultClient.
	HTTP *http.Client
	// Auth sets each request's credentials; nil: none.
	Auth Auth
	// Header is set on every request (a version header, User-Agent).
	// Accept and Content-Type are application/json.
	Header http.Header
	// Limiter is waited on before every attempt, after its pause gate
	// (GateFor). Share it per credential (SharedLimiter). nil: no limit.
	Limiter *rate.Limiter
	// Judge decides what follows a non-2xx answer; nil: 429 Throttled,
	// 5xx Retry, the rest Fail with a *StatusError.
	Judge func(Answer) Verdict
	// OnAnswer sees every answer, 2xx or not (quota headers). It must
	// not block.
	OnAnswer func(Answer)
	// Observer is called after every attempt (metrics). It must not block.
	Observer func(Info)
	// Transport wraps a transport failure; default: a *TransportError.
	Transport func(route string, err error) error
	// Backoff returns the wait before retry n (from 1); default
	// DefaultBackoff.Delay.
	Backoff func(n int) time.Duration
	// Budget bounds the repeats of a call; zero: DefaultBudget.
	Budget Budget
	// MaxRetryAfter caps the default judge's Retry-After
	// (DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds each attempt, answer read included; 0: only
	// the HTTP client's own timeout.
	AttemptTimeout time.Duration
	// MaxBody bounds the answer read (DefaultMaxBody).
	MaxBody int64
	// AllowEmpty makes a 2xx answer with an empty body a success that
	// decodes nothing; otherwise it is undecodable.
	AllowEmpty bool
	// Sleep waits between attempts; default Sleep (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
	// Log receives the repeats: after a Retry at RetryLevel (default
	// warn), after a Wait at debug (a Judge logs its own limit entries).
	Log        *logrus.Entry
	RetryLevel logrus.Level
}

// Info describes one HTTP attempt, for Options.Observer.
type Info struct {
	Method string
	// Route is the request's route, e.g. "PATCH /v1/contacts/{id}".
	Route string
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// Duration is the time from sending the request to reading its answer.
	Duration time.Duration
	// LimiterWait is the time spent on the pause gate and the limiters.
	LimiterWait time.Duration
	// Attempt counts the attempts of one call, from 1.
	Attempt int
	// Err is the attempt's error, nil on a 2xx answer; on the last
	// attempt, the call's error.
	Err error
}

// Request is one API call.
type Request struct {
	Method string
	// Path is appended to the base URL, already escaped; Query, when not
	// empty, follows it.
	Path  string
	Query url.Values
	// Route names the call in errors, logs and Info; default Method Path.
	Route string
	// Body is sent JSON-encoded when not nil.
	Body any
	// Idempotent calls are retried after 5xx answers and transport
	// failures; the others then end with ErrOutcomeUnknown.
	Idempotent bool
	// Limiter, when set, is waited on too, after the client's (a limit
	// of some endpoints only, such as HubSpot's search).
	Limiter *rate.Limiter
}

// IdempotentMethod reports whether repeating a request of method is
// harmless by HTTP's rules (POST is not).
func IdempotentMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}
