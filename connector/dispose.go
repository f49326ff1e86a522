package connector

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// Disposition is what a writer that retries does with a change that
// failed. Dispose decides it, the same way for every connector and every
// writer (the reverse applier's updates, creates and deletes, the
// forward pass's deletes): one place says what is permanent.
type Disposition int

const (
	// Retry sends the change again later, counting an attempt, until the
	// writer's bound: the failure may pass (the outcome is unknown, the
	// system failed with a 5xx or a 408, the connection was lost), or it
	// is an error Dispose does not know, which is safer tried again a
	// bounded number of times than given up at once.
	Retry Disposition = iota
	// Wait sends the change again later without counting an attempt: the
	// system is not taking writes now through no fault of the change (a
	// rate limit, the API budget spent, credentials refused, the caller's
	// context ended).
	Wait
	// Permanent sets the change aside at once: the system refused it with
	// a definite answer (ErrRefused, an HTTP 4xx other than 401, 403, 408
	// and 429), the connector cannot express it (ErrInvalidChange), or
	// the record does not exist (ErrNotFound). Sent again as it is, it
	// fails again; it waits for the data, the mapping or an operator.
	Permanent
	// Postpone decides the change anew: the record changed since it was
	// read (ErrChanged). A writer bounds how often one change is put off.
	Postpone
)

var dispositionNames = [...]string{"retry", "wait", "permanent", "postpone"}

func (d Disposition) String() string {
	if d < 0 || int(d) >= len(dispositionNames) {
		return "unknown"
	}
	return dispositionNames[d]
}

// ErrInvalidChange is matched by the error of a change the connector
// could not turn into a request (a value of a type the field cannot take,
// a field the system lacks): nothing was sent, and the same change fails
// the same way. It is not the other system's refusal (ErrRefused).
var ErrInvalidChange = errors.New("change cannot be written")

// statusCoder is implemented by the errors of an HTTP answer (the remote
// API clients' and the connectors' error types).
type statusCoder interface{ HTTPStatus() int }

// Dispose decides what becomes of a change whose write failed with err
// (not nil), in this order:
//
//   - ErrChanged: Postpone.
//   - the caller's context ended (context.Canceled, DeadlineExceeded):
//     Wait.
//   - ErrOutcomeUnknown: Retry (an update or delete is safe to repeat; a
//     create must be looked for first, which the caller knows).
//   - ErrRefused, ErrInvalidChange, ErrNotFound: Permanent.
//   - ErrBudgetSpent: Wait.
//   - an HTTP status in the chain (HTTPStatus() int): 429, 401 and 403
//     Wait; 408 and 5xx Retry; any other 4xx Permanent (a definite
//     refusal the connector did not mark).
//   - anything else (a lost connection, a database's transient SQLSTATE):
//     Retry.
func Dispose(err error) Disposition {
	var sc statusCoder
	switch {
	case errors.Is(err, ErrChanged):
		return Postpone
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Wait
	case errors.Is(err, ErrOutcomeUnknown):
		return Retry
	case errors.Is(err, ErrRefused) || errors.Is(err, ErrInvalidChange) || errors.Is(err, ErrNotFound):
		return Permanent
	case errors.Is(err, ErrBudgetSpent):
		return Wait
	case errors.As(err, &sc):
		return disposeStatus(sc.HTTPStatus())
	}
	return Retry
}

func disposeStatus(s int) Disposition {
	switch {
	case s == http.StatusTooManyRequests || s == http.StatusUnauthorized || s == http.StatusForbidden:
		return Wait
	case s == http.StatusRequestTimeout || s >= 500:
		return Retry
	case s >= 400:
		return Permanent
	}
	return Retry
}

// Explain returns the text of a failed write for a dead letter or a log:
// err's own text, led, for a refusal, by the field and the system's code,
// and followed by the system's message when err's text lacks it.
func Explain(err error) string {
	var re *RefusedError
	if !errors.As(err, &re) {
		return err.Error()
	}
	var b strings.Builder
	if re.Field != "" {
		b.WriteString("field " + re.Field + " ")
	}
	b.WriteString("refused")
	if re.Code != "" {
		b.WriteString(" (code " + re.Code + ")")
	}
	text := err.Error()
	b.WriteString(": " + text)
	if re.Reason != "" && !strings.Contains(text, re.Reason) {
		b.WriteString(" (" + re.Reason + ")")
	}
	return b.String()
}
