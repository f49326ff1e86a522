package hubspot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
)

var (
	// ErrRateLimited is matched by an *Error for a 429 answer.
	ErrRateLimited = errors.New("hubspot rate limit reached")
	// ErrDailyLimit is matched by an *Error for a 429 under HubSpot's
	// DAILY policy: no call succeeds before the daily quota resets, so
	// the connector stops instead of retrying.
	ErrDailyLimit = errors.New("hubspot daily api limit reached")
	// ErrOutcomeUnknown marks a create whose outcome is unknown: the call
	// failed (5xx, lost connection) after it may have been applied. The
	// caller must find out (e.g. search by email) before creating again.
	// It is remote.ErrOutcomeUnknown, which connector.ErrOutcomeUnknown is.
	ErrOutcomeUnknown = remote.ErrOutcomeUnknown
)

// Error is an error answer of the HubSpot API. Every field but StatusCode
// and Route may be empty: HubSpot documents all of them as optional.
type Error struct {
	StatusCode    int    // HTTP status
	Route         string // "POST /crm/v3/objects/contacts/search"
	Status        string // "error"
	Message       string
	CorrelationID string
	Category      string // VALIDATION_ERROR, OBJECT_NOT_FOUND, CONFLICT, RATE_LIMITS...
	SubCategory   string
	ErrorType     string // RATE_LIMIT on 429s
	PolicyName    string // TEN_SECONDLY_ROLLING, SECONDLY, DAILY on 429s
	Context       map[string][]string
	Errors        []ErrorDetail
	// RetryAfter is the Retry-After header, when one came.
	RetryAfter time.Duration
}

// ErrorDetail is one entry of an error's errors[].
type ErrorDetail struct {
	Message     string
	Code        string
	In          string
	SubCategory string
	Context     map[string][]string
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hubspot %s: %d", e.Route, e.StatusCode)
	if c := e.Category; c != "" {
		b.WriteString(" " + c)
	} else if e.PolicyName != "" {
		b.WriteString(" " + e.PolicyName)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.CorrelationID != "" {
		b.WriteString(" (correlation id " + e.CorrelationID + ")")
	}
	return b.String()
}

// HTTPStatus returns the answer's status.
func (e *Error) HTTPStatus() int { return e.StatusCode }

// Is matches connector.ErrNotFound for 404s and OBJECT_NOT_FOUND,
// ErrRateLimited for 429s and ErrDailyLimit for the DAILY policy.
func (e *Error) Is(target error) bool {
	switch target {
	case connector.ErrNotFound:
		return e.StatusCode == http.StatusNotFound || e.Category == "OBJECT_NOT_FOUND"
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrDailyLimit:
		return e.StatusCode == http.StatusTooManyRequests && e.PolicyName == "DAILY"
	}
	return false
}

// IDs returns the object ids the error names (context.ids, also in its
// errors[]).
func (e *Error) IDs() []string { return e.contextValues("ids") }

// TraceIDs returns the objectWriteTraceIds the error names.
func (e *Error) TraceIDs() []string { return e.contextValues("objectWriteTraceId") }

// ExistingID returns the id of the contact a create conflicted with
// ("Contact already exists. Existing ID: 123"), or "".
func (e *Error) ExistingID() string {
	if ids := e.contextValues("existingId"); len(ids) > 0 {
		return ids[0]
	}
	if m := existingIDPattern.FindStringSubmatch(e.Message); m != nil {
		return m[1]
	}
	return ""
}

var existingIDPattern = regexp.MustCompile(`Existing ID: *([0-9]+)`)

func (e *Error) contextValues(key string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(vs []string) {
		for _, v := range vs {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	add(e.Context[key])
	for _, d := range e.Errors {
		add(d.Context[key])
	}
	return out
}

// refused reports whether HubSpot refused the call with a definite
// answer, so that nothing was written: a 4xx other than 408 and 429.
func (e *Error) refused() bool {
	s := e.StatusCode
	return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
}

// refusal returns err as a *connector.RefusedError when it holds an
// *Error HubSpot refused the call with, naming the property at fault
// when HubSpot does; else err.
func refusal(err error) error {
	var e *Error
	if !errors.As(err, &e) || !e.refused() {
		return err
	}
	r := &connector.RefusedError{Code: e.Category, Reason: e.Message, Err: err}
	if r.Code == "" {
		r.Code = strconv.Itoa(e.StatusCode)
	}
	if names := e.contextValues("propertyName"); len(names) > 0 {
		r.Field = names[0]
	}
	return r
}

// itemFault reports whether the error is about the inputs of a batch
// call (a bad value, an unknown id, a conflict), so that the call may be
// narrowed down to the inputs at fault, rather than about the call
// itself (auth, limits, outage).
func (e *Error) itemFault() bool {
	switch e.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// wireError is the JSON of an error answer (or of one entry of a batch
// answer's errors[]).
type wireError struct {
	Status        string                     `json:"status"`
	Message       string                     `json:"message"`
	CorrelationID string                     `json:"correlationId"`
	Category      string                     `json:"category"`
	SubCategory   string                     `json:"subCategory"`
	ErrorType     string                     `json:"errorType"`
	PolicyName    string                     `json:"policyName"`
	Context       map[string]json.RawMessage `json:"context"`
	Errors        []struct {
		Message     string                     `json:"message"`
		Code        string                     `json:"code"`
		In          string                     `json:"in"`
		SubCategory string                     `json:"subCategory"`
		Context     map[string]json.RawMessage `json:"context"`
	} `json:"errors"`
}

func (w wireError) toError(status int, route string) *Error {
	e := &Error{
		StatusCode: status, Route: route, Status: w.Status, Message: w.Message,
		CorrelationID: w.CorrelationID, Category: w.Category, SubCategory: w.SubCategory,
		ErrorType: w.ErrorType, PolicyName: w.PolicyName, Context: contextOf(w.Context),
	}
	for _, d := range w.Errors {
		e.Errors = append(e.Errors, ErrorDetail{Message: d.Message, Code: d.Code, In: d.In, SubCategory: d.SubCategory, Context: contextOf(d.Context)})
	}
	return e
}

// contextOf keeps the context entries that are strings or numbers, or
// lists of them; HubSpot's are lists of strings.
func contextOf(raw map[string]json.RawMessage) map[string][]string {
	if len(raw) == 0 {
		return nil
	}
	out := map[string][]string{}
	for k, v := range raw {
		var list []any
		if json.Unmarshal(v, &list) != nil {
			var one any
			if json.Unmarshal(v, &one) != nil {
				continue
			}
			list = []any{one}
		}
		for _, x := range list {
			switch t := x.(type) {
			case string:
				out[k] = append(out[k], t)
			case float64:
				out[k] = append(out[k], strconv.FormatFloat(t, 'f', -1, 64))
			}
		}
	}
	return out
}

// parseError builds the error of a non-2xx answer. A body that is not
// HubSpot's JSON (a proxy's HTML page) becomes the message, shortened.
func parseError(status int, route string, header http.Header, body []byte) *Error {
	var w wireError
	if err := json.Unmarshal(body, &w); err != nil {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		w = wireError{Message: msg}
	}
	e := w.toError(status, route)
	now := time.Now()
	if until, ok := remote.ParseRetryAfter(header.Get("Retry-After"), now); ok {
		e.RetryAfter = max(0, until.Sub(now))
	}
	return e
}
