package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/syncd-io/syncd/internal/remote"
)

// ErrOutcomeUnknown is wrapped by the error of a call that changes state
// without being idempotent (a create, a secret rotation, a delivery retry,
// a test event) when the request may have reached the service but no
// usable answer came back: a transport failure after the request was sent,
// a connection closed before the answer, an undecodable answer, a 5xx, or
// a context cancelled while waiting. The write may or may not have been
// applied. Such calls are never retried blindly: the caller must look the
// resource up (a contact by its externalId, a webhook by its URL) before
// trying again, or it risks a duplicate.
//
// errors.Is(err, ErrOutcomeUnknown) must be checked before IsTransient: an
// outcome-unknown error may also be transient. It is remote.ErrOutcomeUnknown,
// the one every remote API client and connector.ErrOutcomeUnknown share.
var ErrOutcomeUnknown = remote.ErrOutcomeUnknown

// ErrInvalidRequest is wrapped by errors the client raises itself, before
// any call, for a request the service would refuse (more than 50 filter
// values, a page size out of range, an empty id).
var ErrInvalidRequest = errors.New("invalid request")

// maxErrorText bounds the text of a non-JSON error answer kept in an
// APIError.
const maxErrorText = 512

// APIError is a refusal by the service: a non-2xx answer. Body holds the
// service's error body; when the answer was not JSON, Body.Message holds
// its text, truncated.
type APIError struct {
	Method string // HTTP method
	Route  string // route template, e.g. "PATCH /v1/contacts/{id}"
	Status int    // HTTP status
	Body   ErrorBody
}

// Error names the call, the status, and the service's code, title and
// message. It never contains the API key.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace api %s: %d", e.Route, e.Status)
	title := e.Body.Title
	if title == "" {
		title = http.StatusText(e.Status)
	}
	if title != "" {
		b.WriteString(" " + title)
	}
	if e.Body.Code != "" {
		fmt.Fprintf(&b, " (code %s)", e.Body.Code)
	}
	msg := e.Body.Message
	if msg == "" && len(e.Body.Errors) > 0 {
		parts := make([]string, 0, len(e.Body.Errors))
		for _, fe := range e.Body.Errors {
			parts = append(parts, fe.Path+": "+fe.Message)
		}
		msg = strings.Join(parts, "; ")
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	return b.String()
}

// HTTPStatus returns the answer's status.
func (e *APIError) HTTPStatus() int { return e.Status }

// decodeAPIError builds the APIError of a non-2xx answer. secret, when
// found in a text body, is redacted, so that an answer echoing the request
// cannot leak the API key into logs.
func decodeAPIError(method, route string, status int, body []byte, secret string) *APIError {
	e := &APIError{Method: method, Route: route, Status: status}
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return e
	}
	var eb ErrorBody
	if err := json.Unmarshal(body, &eb); err == nil && strings.HasPrefix(trimmed, "{") {
		e.Body = eb
		redactBody(&e.Body, secret)
		return e
	}
	e.Body.Message = redact(truncate(trimmed, maxErrorText), secret)
	return e
}

func redactBody(b *ErrorBody, secret string) {
	b.Message = redact(b.Message, secret)
	b.Title = redact(b.Title, secret)
	b.Description = redact(b.Description, secret)
	for i := range b.Errors {
		b.Errors[i].Message = redact(b.Errors[i].Message, secret)
		if s, ok := b.Errors[i].Value.(string); ok {
			b.Errors[i].Value = redact(s, secret)
		}
	}
}

func redact(s, secret string) string {
	if secret == "" || !strings.Contains(s, secret) {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// transportError is a failure to get an answer at all: connection refused
// or reset, timeout, a body cut short.
type transportError struct {
	route string
	err   error
}

func (e *transportError) Error() string { return fmt.Sprintf("workspace api %s: %v", e.route, e.err) }
func (e *transportError) Unwrap() error { return e.err }

// statusOf returns the status of an APIError in err's chain, or 0.
func statusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// IsNotFound reports whether the service answered 404.
func IsNotFound(err error) bool { return statusOf(err) == http.StatusNotFound }

// IsRateLimited reports whether the service answered 429 (after the
// client's own retries, when the call was retryable).
func IsRateLimited(err error) bool { return statusOf(err) == http.StatusTooManyRequests }

// IsValidation reports whether the request was refused as invalid: a 400
// or 422 answer, or a request the client refused itself (ErrInvalidRequest).
func IsValidation(err error) bool {
	s := statusOf(err)
	return s == http.StatusBadRequest || s == http.StatusUnprocessableEntity || errors.Is(err, ErrInvalidRequest)
}

// IsUnauthorized reports whether the API key was refused: 401 (missing or
// wrong key) or 403 (a key without rights).
func IsUnauthorized(err error) bool {
	s := statusOf(err)
	return s == http.StatusUnauthorized || s == http.StatusForbidden
}

// IsTransient reports whether the failure may go away by itself: a 429, a
// 5xx or a transport failure. A cancelled or expired context is not
// transient. For a non-idempotent call, check ErrOutcomeUnknown first.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	// A client timeout (http.Client.Timeout) is a transport failure even
	// though it matches context.DeadlineExceeded; the caller's own context
	// ending is never wrapped in a transportError.
	var te *transportError
	if errors.As(err, &te) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	s := statusOf(err)
	return s == http.StatusTooManyRequests || s >= 500
}
