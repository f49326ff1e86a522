package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/internal/remote"
)

// Retry policy of the client.
const (
	maxAttempts      = 6  // for 5xx and transport failures of idempotent calls
	maxLimitAttempts = 10 // for 429 and 423 answers
	backoffBase      = 500 * time.Millisecond
	backoffMax       = 8 * time.Second
	lockedWait       = 2 * time.Second  // HubSpot: wait at least 2 s after a 423
	secondlyWait     = 1 * time.Second  // the SECONDLY (search) window
	tenSecondlyWait  = 10 * time.Second // the TEN_SECONDLY_ROLLING window
	maxRetryAfter    = 2 * time.Minute  // a longer Retry-After fails the call
	requestTimeout   = 60 * time.Second
)

// client makes HubSpot API calls on remote's request loop: every attempt
// waits for the limiter (and search attempts for the search limiter too),
// answers are retried as the documentation asks (judge), and errors are
// *Error values.
type client struct {
	rc            *remote.Client
	http          *http.Client
	searchLimiter *rate.Limiter
	log           *logrus.Entry
	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

func newClient(baseURL string, token Secret, limiter, searchLimiter *rate.Limiter, log *logrus.Entry) *client {
	c := &client{
		http:          &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		searchLimiter: searchLimiter,
		log:           log,
		sleep:         remote.Sleep,
	}
	c.rc = remote.New(remote.Options{
		Name:           "hubspot",
		BaseURL:        baseURL,
		HTTP:           c.http,
		Auth:           remote.Header("Authorization", "Bearer "+token.Reveal()),
		Limiter:        limiter,
		Judge:          c.judge,
		Backoff:        remote.Backoff{Base: backoffBase, Max: backoffMax}.Delay,
		Budget:         remote.Budget{Retries: maxAttempts - 1, Waits: maxLimitAttempts - 1},
		AttemptTimeout: requestTimeout,
		MaxBody:        64 << 20,
		AllowEmpty:     true,
		Sleep:          func(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) },
		Log:            log,
	})
	return c
}

// call is one API request.
type call struct {
	method string
	path   string
	query  url.Values
	body   any // JSON-encoded when non-nil
	// search calls also wait for the search limiter.
	search bool
	// idempotent calls are retried after 5xx answers and transport
	// failures; others (creates) end with ErrOutcomeUnknown.
	idempotent bool
}

func (c call) route() string { return c.method + " " + c.path }

// do sends the call and decodes a 2xx answer into out (unless nil, 204
// or empty). It returns the answer's status.
func (c *client) do(ctx context.Context, cl call, out any) (int, error) {
	r := remote.Request{Method: cl.method, Path: cl.path, Query: cl.query, Body: cl.body, Idempotent: cl.idempotent}
	if cl.search {
		r.Limiter = c.searchLimiter
	}
	return c.rc.Do(ctx, r, out)
}

// judge decides what follows a non-2xx answer. 429, 423 and 477 were
// refused before being applied: safe to repeat, even a create, after
// limitWait, except under the DAILY policy (ErrDailyLimit) or when the
// wait is over maxRetryAfter. 5xx answers are retried with backoff.
func (c *client) judge(a remote.Answer) remote.Verdict {
	herr := parseError(a.Status, a.Route, a.Header, a.Body)
	switch {
	case a.Status == http.StatusTooManyRequests || a.Status == http.StatusLocked || a.Status == 477:
		if herr.PolicyName == "DAILY" {
			return remote.Verdict{Action: remote.Fail, Err: fmt.Errorf("%w: %w", ErrDailyLimit, herr)}
		}
		d := limitWait(herr, a.Header, a.Waits+1)
		if d > maxRetryAfter {
			return remote.Verdict{Action: remote.Fail, Err: herr}
		}
		if a.Waits+1 < maxLimitAttempts {
			c.log.WithFields(logrus.Fields{logfield.Route: a.Route, logfield.Status: a.Status, logfield.Policy: herr.PolicyName, logfield.Delay: d}).
				Info("hubspot rate limited, waiting")
		}
		return remote.Verdict{Action: remote.Wait, After: d, Err: herr}
	case a.Status >= 500:
		return remote.Verdict{Action: remote.Retry, Err: herr}
	}
	return remote.Verdict{Action: remote.Fail, Err: herr}
}

// limitWait is the delay after the n-th 429 or 423 in a row: Retry-After
// when HubSpot sent one; at least 2 s after a 423; for a 429, the
// policy's window: one second for SECONDLY, growing from a tenth of the
// window to the whole of it for TEN_SECONDLY_ROLLING (the window's length
// comes from X-HubSpot-RateLimit-Interval-Milliseconds when sent).
func limitWait(e *Error, header http.Header, n int) time.Duration {
	if e.RetryAfter > 0 {
		if e.StatusCode == http.StatusLocked {
			return max(e.RetryAfter, lockedWait)
		}
		return e.RetryAfter
	}
	if e.StatusCode == http.StatusLocked {
		return lockedWait
	}
	if e.PolicyName == "SECONDLY" {
		return secondlyWait
	}
	window := tenSecondlyWait
	if ms, err := strconv.Atoi(header.Get("X-HubSpot-RateLimit-Interval-Milliseconds")); err == nil && ms > 0 {
		window = time.Duration(ms) * time.Millisecond
	}
	d := window / 10 << (n - 1)
	if d > window || d <= 0 {
		d = window
	}
	return d
}
