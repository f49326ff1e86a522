package remote

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrOutcomeUnknown is wrapped by the error of a call that is not
// idempotent (a create, a rotation, a delivery) when the request may have
// reached the service but no usable answer came back: a 5xx, a transport
// failure after the request was sent, an undecodable answer, or the
// caller's context ending while waiting for the answer. The write may or
// may not have been applied; the caller must look before trying again.
// workspace.ErrOutcomeUnknown, hubspot.ErrOutcomeUnknown and
// connector.ErrOutcomeUnknown are this error.
var ErrOutcomeUnknown = errors.New("outcome unknown: the write may or may not have been applied")

// ErrNoRenew is returned by the Renew of credentials that cannot be
// renewed (a fixed API key).
var ErrNoRenew = errors.New("credentials cannot be renewed")

// Action is what the loop does after a non-2xx answer.
type Action int

// Actions of a Verdict.
const (
	// Fail ends the call with Verdict.Err.
	Fail Action = iota
	// Retry repeats a call that failed (5xx): only when it is idempotent
	// (otherwise the call ends with an error wrapping ErrOutcomeUnknown),
	// after exponential backoff (at least Verdict.After), within
	// Budget.Retries.
	Retry
	// Wait repeats a call the service refused before applying it (429,
	// a lock): safe for every method. It waits Verdict.After (plus
	// backoff with Verdict.Backoff), within Budget.Waits.
	Wait
	// Renew asks the Auth for new credentials (the service said the
	// session expired) and repeats the call at once; once per call. A
	// renewal that fails ends the call.
	Renew
)

// Verdict is a Judge's decision on a non-2xx answer.
type Verdict struct {
	Action Action
	// Err is the answer as an error: returned on Fail, and when the
	// budget runs out. Required.
	Err error
	// After is the least wait before the next attempt (Retry-After, a
	// limit window), for this caller only.
	After time.Duration
	// Backoff (Wait only) adds the loop's backoff: the wait is
	// max(After, backoff). Retry always backs off.
	Backoff bool
	// Pause (Wait only) closes the limiter's shared gate this long: every
	// caller of the credential holds back, not only this one.
	Pause time.Duration
	// Drain (Wait only) empties the limiter's saved-up burst.
	Drain bool
}

// Throttled is the usual verdict on a 429: with a Retry-After (capped
// at maxWait), every caller of the credential pauses until then; without
// one, every caller pauses for brief (see BriefPause), the limiter's
// burst is drained, and this caller backs off.
func Throttled(h http.Header, maxWait, brief time.Duration, err error) Verdict {
	if d, ok := RetryAfter(h, maxWait); ok {
		return Verdict{Action: Wait, Pause: d, Err: err}
	}
	return Verdict{Action: Wait, Pause: brief, Drain: true, Backoff: true, Err: err}
}

// Answer is one HTTP answer, as the Judge and OnAnswer hooks see it.
type Answer struct {
	Method string
	Route  string
	Status int
	Header http.Header
	Body   []byte
	// Attempt counts the attempts of the call, from 1; Retries and Waits
	// the Retry and Wait verdicts before this answer.
	Attempt, Retries, Waits int
}

// StatusError is the error of a non-2xx answer under the default judge.
type StatusError struct {
	API, Route string
	Status     int
	// Body is the start of the answer's body.
	Body string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s %s: %d %s", e.API, e.Route, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// HTTPStatus returns the answer's status.
func (e *StatusError) HTTPStatus() int { return e.Status }

// TransportError is a failure to get a full answer: connection refused
// or reset, a timeout, an answer cut short.
type TransportError struct {
	API, Route string
	Err        error
}

func (e *TransportError) Error() string { return fmt.Sprintf("%s %s: %v", e.API, e.Route, e.Err) }
func (e *TransportError) Unwrap() error { return e.Err }

// defaultJudge is the Judge of a client without one: 429 as Throttled,
// 5xx retried (after a Retry-After when sent), anything else fails with
// a *StatusError.
func (c *Client) defaultJudge(a Answer) Verdict {
	body := strings.TrimSpace(string(a.Body))
	if len(body) > 200 {
		body = body[:200] + "..."
	}
	err := &StatusError{API: c.opts.Name, Route: a.Route, Status: a.Status, Body: body}
	switch {
	case a.Status == http.StatusTooManyRequests:
		return Throttled(a.Header, c.opts.MaxRetryAfter, BriefPause(c.opts.Limiter, 250*time.Millisecond), err)
	case a.Status >= 500:
		after, _ := RetryAfter(a.Header, c.opts.MaxRetryAfter)
		return Verdict{Action: Retry, After: after, Err: err}
	}
	return Verdict{Action: Fail, Err: err}
}
