package salesforce

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

var (
	// ErrDailyLimit is matched by an *Error for REQUEST_LIMIT_EXCEEDED:
	// the org's daily API allowance is spent, and no call succeeds before
	// it renews.
	ErrDailyLimit = errors.New("salesforce daily api limit reached")
	// ErrSession is matched by an *Error for INVALID_SESSION_ID.
	ErrSession = errors.New("salesforce session expired or invalid")
	// ErrRequiredField is matched by a *RecordError for a create that
	// would leave a field Salesforce requires empty.
	ErrRequiredField = errors.New("required field missing")
)

// Error is an error answer of the REST API: its HTTP status and the
// first entry of the JSON array Salesforce answers with.
type Error struct {
	Status  int
	Route   string
	Code    string // errorCode: INVALID_SESSION_ID, MALFORMED_QUERY, ...
	Message string
	Fields  []string
}

// Error implements error.
func (e *Error) Error() string {
	s := fmt.Sprintf("salesforce %s: %d", e.Route, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if len(e.Fields) > 0 {
		s += " (fields " + strings.Join(e.Fields, ", ") + ")"
	}
	return s
}

// HTTPStatus returns the answer's status.
func (e *Error) HTTPStatus() int { return e.Status }

// Is matches ErrDailyLimit (and connector.ErrBudgetSpent: the pass stops
// and resumes at the next schedule), ErrSession and connector.ErrNotFound.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrDailyLimit, connector.ErrBudgetSpent:
		return e.Code == "REQUEST_LIMIT_EXCEEDED"
	case ErrSession:
		return e.Code == "INVALID_SESSION_ID"
	case connector.ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

type wireError struct {
	Message   string   `json:"message"`
	ErrorCode string   `json:"errorCode"`
	Fields    []string `json:"fields"`
}

// parseError builds the error of a non-2xx answer. A body that is not
// Salesforce's JSON array (a proxy's page) becomes the message, cut short.
func parseError(status int, route string, body []byte) *Error {
	var list []wireError
	if err := json.Unmarshal(body, &list); err == nil && len(list) > 0 {
		return &Error{Status: status, Route: route, Code: list[0].ErrorCode, Message: list[0].Message, Fields: list[0].Fields}
	}
	var one wireError
	if err := json.Unmarshal(body, &one); err == nil && one.ErrorCode != "" {
		return &Error{Status: status, Route: route, Code: one.ErrorCode, Message: one.Message, Fields: one.Fields}
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return &Error{Status: status, Route: route, Message: msg}
}

// RecordError is one record's failure inside an sObject Collections
// answer (its errors[]): the call succeeded, this record was not written.
type RecordError struct {
	Op      connector.Op
	ID      string
	Code    string // statusCode: FIELD_CUSTOM_VALIDATION_EXCEPTION, REQUIRED_FIELD_MISSING, ...
	Message string
	Fields  []string
}

// Error implements error; it names the fields the refusal is about.
func (e *RecordError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "salesforce refused the %s", e.Op)
	if e.ID != "" {
		b.WriteString(" of " + e.ID)
	}
	b.WriteString(": " + e.Code)
	if len(e.Fields) > 0 {
		fmt.Fprintf(&b, " on field %s", strings.Join(e.Fields, ", "))
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Field returns the first field the refusal names, or "".
func (e *RecordError) Field() string {
	if len(e.Fields) > 0 {
		return e.Fields[0]
	}
	return ""
}

// HTTPStatus is 400: the record was refused with a definite answer and
// nothing was written for it; sending it again as it is will be refused
// again. A record lock or a failure of Salesforce's own is 503: it may
// pass next time.
func (e *RecordError) HTTPStatus() int {
	if e.transient() {
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// Is matches connector.ErrNotFound for a record that does not exist or
// was deleted, and ErrRequiredField.
func (e *RecordError) Is(target error) bool {
	switch target {
	case connector.ErrNotFound:
		return e.notFound()
	case ErrRequiredField:
		return e.Code == "REQUIRED_FIELD_MISSING"
	}
	return false
}

func (e *RecordError) notFound() bool {
	switch e.Code {
	case "ENTITY_IS_DELETED", "INVALID_CROSS_REFERENCE_KEY", "MALFORMED_ID", "NOT_FOUND", "INVALID_ID_FIELD":
		return true
	}
	return false
}

// result is the error a change reports for the refusal: a
// *connector.RefusedError naming Salesforce's code, message and field
// (its Err the *RecordError), for creates and updates alike (a
// validation rule's FIELD_CUSTOM_VALIDATION_EXCEPTION, a required field,
// a value too long, ...), except for a missing record
// (connector.ErrNotFound keeps its meaning) and a failure that may pass
// next time (a lock, an error inside Salesforce).
func (e *RecordError) result() error {
	if e.transient() || e.notFound() {
		return e
	}
	return &connector.RefusedError{Field: e.Field(), Code: e.Code, Reason: e.Message, Err: e}
}

// locked reports whether the refusal is a record lock, which the
// documentation says to retry.
func (e *RecordError) locked() bool { return e.Code == "UNABLE_TO_LOCK_ROW" }

// transient reports whether the record failed for a reason other than
// its data, so that it may pass next time: a lock, an error inside
// Salesforce (UNKNOWN_EXCEPTION, also used when an answer gives no
// error), a request that ran too long, a rollback caused by another
// record.
func (e *RecordError) transient() bool {
	switch e.Code {
	case "UNABLE_TO_LOCK_ROW", "UNKNOWN_EXCEPTION", "REQUEST_RUNNING_TOO_LONG", "SERVER_UNAVAILABLE", "ALL_OR_NONE_OPERATION_ROLLED_BACK":
		return true
	}
	return false
}
