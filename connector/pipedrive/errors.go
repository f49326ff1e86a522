package pipedrive

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

var (
	// ErrDailyBudget is matched by the error of a call refused because
	// the company's daily token budget, or the share of it the settings
	// give syncd (tokenBudget), is spent: nothing succeeds before the
	// budget resets, so the pass stops instead of retrying.
	// It wraps connector.ErrBudgetSpent.
	ErrDailyBudget = fmt.Errorf("pipedrive daily api token budget: %w", connector.ErrBudgetSpent)
	// ErrOutcomeUnknown marks a create whose outcome is unknown: the call
	// failed (5xx, lost connection) after it may have been applied. It is
	// connector.ErrOutcomeUnknown.
	ErrOutcomeUnknown = connector.ErrOutcomeUnknown
)

// Error is an error answer of the Pipedrive API.
type Error struct {
	StatusCode int    // HTTP status
	Route      string // "PATCH /api/v2/persons/{id}"
	Message    string // the answer's error
	Info       string // the answer's error_info
	// pipedrive is set when the body was Pipedrive's error JSON.
	pipedrive bool
}

// Error implements error.
func (e *Error) Error() string {
	msg := fmt.Sprintf("pipedrive %s: %d", e.Route, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Is matches connector.ErrNotFound for 404s.
func (e *Error) Is(target error) bool {
	return target == connector.ErrNotFound && e.StatusCode == http.StatusNotFound
}

// HTTPStatus returns the answer's status.
func (e *Error) HTTPStatus() int { return e.StatusCode }

// refused reports whether Pipedrive refused the change with a definite
// answer, so that nothing was written and sending it again as it is would
// be refused again: a 4xx in Pipedrive's own error body (a validation
// error is a 400), other than 401 (the token, not the change), 408 and
// 429 (try again later). A 403 without Pipedrive's body is Cloudflare's
// block of a token that kept on after 429s: not about the change either.
func (e *Error) refused() bool {
	s := e.StatusCode
	switch s {
	case http.StatusUnauthorized, http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	case http.StatusForbidden:
		return e.pipedrive
	}
	return s >= 400 && s < 500
}

// refusal returns err as a *connector.RefusedError when it holds an
// *Error Pipedrive refused the call with; else err.
func refusal(err error) error {
	var e *Error
	if !errors.As(err, &e) || !e.refused() || e.StatusCode == http.StatusNotFound {
		return err
	}
	return &connector.RefusedError{Code: strconv.Itoa(e.StatusCode), Reason: e.Message, Err: err}
}

// refusalOf is refusal naming the record field the refused call wrote.
func refusalOf(field string, err error) error {
	r := refusal(err)
	if re, ok := r.(*connector.RefusedError); ok {
		re.Field = field
	}
	return r
}

// refuse is a change the connector refuses before sending it: a value
// Pipedrive cannot take, or a field it cannot write. Nothing is written,
// and the same change would be refused again.
func refuse(field, reason string) error {
	return &connector.RefusedError{Field: field, Reason: reason}
}

// parseError builds the error of a non-2xx answer. A body that is not
// Pipedrive's JSON (Cloudflare's HTML page) becomes the message,
// shortened.
func parseError(status int, route string, body []byte) *Error {
	var w struct {
		Error     string `json:"error"`
		ErrorInfo string `json:"error_info"`
	}
	e := &Error{StatusCode: status, Route: route}
	if json.Unmarshal(body, &w) == nil && w.Error != "" {
		e.Message, e.Info, e.pipedrive = w.Error, w.ErrorInfo, true
		return e
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	e.Message = msg
	return e
}
