package pipedrive

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	// failed (5xx, lost connection) after it may have been applied.
	ErrOutcomeUnknown = errors.New("pipedrive write outcome unknown")
)

// Error is an error answer of the Pipedrive API.
type Error struct {
	StatusCode int    // HTTP status
	Route      string // "PATCH /api/v2/persons/{id}"
	Message    string // the answer's error
	Info       string // the answer's error_info
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

// HTTPStatus returns the answer's status, so that callers outside the
// package can tell a refusal (4xx: nothing was written) from the rest.
func (e *Error) HTTPStatus() int { return e.StatusCode }

// FieldError is a value Pipedrive cannot take, or a field the connector
// cannot write: a change failing with it is refused for good, not retried.
type FieldError struct {
	Field  string // the record field, e.g. "custom_fields.<key>", "emails.work"
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %s", e.Field, e.Reason) }

// HTTPStatus is 400: the change was refused before it was sent, as
// Pipedrive's validation would refuse it; nothing was written.
func (e *FieldError) HTTPStatus() int { return http.StatusBadRequest }

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
		e.Message, e.Info = w.Error, w.ErrorInfo
		return e
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	e.Message = msg
	return e
}
