package connector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/syncd-io/syncd/internal/remote"
)

// statusErr is an error answer of some HTTP API, as the connectors' own
// error types are (they implement HTTPStatus).
type statusErr int

func (e statusErr) Error() string   { return fmt.Sprintf("api: %d", int(e)) }
func (e statusErr) HTTPStatus() int { return int(e) }

func TestDispose(t *testing.T) {
	pgCheck := &RefusedError{Field: "last_name", Code: "23514", Reason: `new row violates check constraint "c_last_name_check"`}
	crm400 := &RefusedError{Code: "VALIDATION_ERROR", Reason: "Property values were not valid", Err: statusErr(400)}
	for _, tc := range []struct {
		name string
		err  error
		want Disposition
	}{
		{"refused", pgCheck, Permanent},
		{"refused wrapped", fmt.Errorf("update 1 in people: %w", pgCheck), Permanent},
		{"refused wrapping a 400", fmt.Errorf("update contact 7: %w", crm400), Permanent},
		{"refused in a join", errors.Join(errors.New("other"), pgCheck), Permanent},
		{"refused by sentinel", fmt.Errorf("x: %w", ErrRefused), Permanent},
		{"not found", ErrNotFound, Permanent},
		{"not found wrapped", fmt.Errorf("record 9: %w", ErrNotFound), Permanent},
		{"invalid change", fmt.Errorf("column age: %w: a list for an int", ErrInvalidChange), Permanent},
		{"unmarked 400", fmt.Errorf("update: %w", statusErr(400)), Permanent},
		{"unmarked 404", statusErr(404), Permanent},
		{"unmarked 409", statusErr(409), Permanent},
		{"unmarked 422", &remote.StatusError{API: "crm", Status: 422}, Permanent},
		{"outcome unknown", fmt.Errorf("%w: connection reset", ErrOutcomeUnknown), Retry},
		{"outcome unknown of a 502", fmt.Errorf("%w: %w", ErrOutcomeUnknown, statusErr(502)), Retry},
		{"5xx", fmt.Errorf("update: %w", statusErr(503)), Retry},
		{"500 of the remote loop", &remote.StatusError{API: "crm", Status: 500}, Retry},
		{"408", statusErr(408), Retry},
		{"429", statusErr(429), Wait},
		{"429 wrapped", fmt.Errorf("update 3 persons: %w", &remote.StatusError{API: "crm", Status: 429}), Wait},
		{"401 credentials refused", statusErr(401), Wait},
		{"403 credentials refused", statusErr(403), Wait},
		{"budget spent", fmt.Errorf("pipedrive daily api token budget: %w", ErrBudgetSpent), Wait},
		{"context canceled", context.Canceled, Wait},
		{"context canceled wrapped", fmt.Errorf("update 1: %w", context.Canceled), Wait},
		{"deadline exceeded", context.DeadlineExceeded, Wait},
		{"canceled while the outcome is unknown", fmt.Errorf("%w: %w", ErrOutcomeUnknown, context.Canceled), Wait},
		{"changed since read", fmt.Errorf("update person 5: changed at 10:00:00.123: %w", ErrChanged), Postpone},
		{"transport failure", &remote.TransportError{API: "crm", Err: syscall.ECONNRESET}, Retry},
		{"connection cut short", io.ErrUnexpectedEOF, Retry},
		{"unknown error", errors.New("something odd"), Retry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Dispose(tc.err); got != tc.want {
				t.Fatalf("Dispose(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"refusal naming its field", fmt.Errorf("update 1 in people: %w",
			&RefusedError{Field: "last_name", Code: "23514", Reason: "value too long", Err: errors.New("ERROR: value too long (SQLSTATE 23514)")}),
			"field last_name refused (code 23514): update 1 in people: ERROR: value too long (SQLSTATE 23514)"},
		{"reason not in the text", &RefusedError{Field: "email", Code: "400", Reason: "invalid email", Err: errors.New("pipedrive PATCH: 400")},
			"field email refused (code 400): pipedrive PATCH: 400 (invalid email)"},
		{"refusal without field", &RefusedError{Code: "VALIDATION_ERROR", Reason: "Property values were not valid"},
			"refused (code VALIDATION_ERROR): refused: Property values were not valid (code VALIDATION_ERROR)"},
		{"not a refusal", errors.New("connection reset"), "connection reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Explain(tc.err); got != tc.want {
				t.Fatalf("Explain = %q, want %q", got, tc.want)
			}
		})
	}
}
