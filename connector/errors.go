package connector

import (
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/internal/remote"
)

// The errors of a failed write (WriteResult.Err) say what became of the
// change, so that the caller knows whether it may send it again:
//
//   - a change the other system refused with a definite answer wrote
//     nothing: its error matches ErrRefused (a *RefusedError in its
//     chain names the field and the system's code). Sending it again as
//     it is will be refused again; it waits for the data or the mapping
//     to change.
//   - a change that may or may not have been applied wraps
//     ErrOutcomeUnknown. A create failed so must not be sent again
//     before the record has been looked for, or it may be created twice.
//   - a change the connector could not turn into a request (a value of
//     a type the field cannot take, a field the system lacks) wrote
//     nothing: its error matches ErrInvalidChange. It is not the other
//     system's refusal, but it fails the same way every time.
//   - a change the system turned away before applying it (a 429, a
//     spent API budget, refused credentials) or that the caller's
//     context cut short before it was sent wrote nothing: Dispose says
//     Wait, and the error does not wrap ErrOutcomeUnknown (a context
//     that ended once the request may have been sent does).
//   - any other error (a lost connection, a 5xx) wrote nothing for
//     certain only when the connector says so. Callers that must be
//     safe treat it, for a create, as ErrOutcomeUnknown.
//
// ErrNotFound and ErrChanged keep their own meaning. Dispose (dispose.go)
// is the one rule that says which of these a writer sends again.

// ErrOutcomeUnknown is wrapped by the error of a write that may or may
// not have been applied: the request may have reached the other system
// but no definite answer came (a lost connection, a 5xx, an undecodable
// answer, a commit whose answer was lost). It is remote.ErrOutcomeUnknown,
// so the errors of the remote API clients match it as they are.
var ErrOutcomeUnknown = remote.ErrOutcomeUnknown

// ErrRefused is matched by the error of a write the other system refused
// with a definite answer, so that nothing was written: a constraint or
// type error of a database (SQLSTATE), an HTTP 4xx other than 408 and
// 429, a validation error of a CRM. Connectors return a *RefusedError,
// which matches it.
var ErrRefused = errors.New("refused by the other system")

// RefusedError is a write the other system refused (see ErrRefused).
type RefusedError struct {
	// Field is the field the system named as the cause, when it named one.
	Field string
	// Code is the system's code for the refusal: an SQLSTATE ("23502"), a
	// CRM's error category ("VALIDATION_ERROR"), an HTTP status ("400").
	Code string
	// Reason is the system's message.
	Reason string
	// Err is the system's own error, when there is one: Error returns its
	// text and errors.As reaches it.
	Err error
}

// Error returns the system's error text, or describes the refusal.
func (e *RefusedError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	s := "refused"
	if e.Field != "" {
		s += " " + e.Field
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Code != "" {
		s += fmt.Sprintf(" (code %s)", e.Code)
	}
	return s
}

// Unwrap returns the system's own error.
func (e *RefusedError) Unwrap() error { return e.Err }

// Is matches ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// ErrSchema is matched by the error of an Open that reached the system and
// found that the settings do not fit what is there (no such table or
// column, a column of a type the connector cannot use): a problem of the
// configuration that `syncd validate` reports, unlike an unreachable
// system, which it only notes.
var ErrSchema = errors.New("settings do not fit the source")

// SchemaError marks err as an ErrSchema, keeping its message.
func SchemaError(err error) error {
	if err == nil {
		return nil
	}
	return &schemaError{err}
}

type schemaError struct{ err error }

func (e *schemaError) Error() string        { return e.err.Error() }
func (e *schemaError) Unwrap() error        { return e.err }
func (e *schemaError) Is(target error) bool { return target == ErrSchema }
