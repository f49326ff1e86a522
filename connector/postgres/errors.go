package postgres

import (
	"errors"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// changeError is a change's error as Write reports it.
func (s *Source) changeError(c connector.Change, err error) error {
	return sqlkit.ChangeError(c, s.tbl.name, s.red.redact(err), refusal)
}

// maybeSent reports whether a statement that failed with err may have
// reached the server and been applied: not when the server answered (an
// SQLSTATE error, no row), the connection was never made, or pgx knows
// nothing was sent.
func maybeSent(err error) bool {
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	return !errors.As(err, &pe) && !errors.As(err, &ce) && !errors.Is(err, pgx.ErrNoRows) && !pgconn.SafeToRetry(err)
}

// refusal marks an error of the server (SQLSTATE) that refuses the data
// or the statement for good as the connector contract's refusal: nothing
// was written, and the same change is refused again. An SQLSTATE of a
// passing condition (a lost connection, a serialization failure or
// deadlock, a lock or statement timeout, a shutdown, too many
// connections) stays unmarked: it may succeed next time. (A redacted
// error hides its cause, and stays unmarked.)
func refusal(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !definite(pe.Code) {
		return err
	}
	field := pe.ColumnName
	if field == "" && pe.Code == "23505" { // unique_violation: "Key (email)=(...) already exists."
		if m := uniqueKey.FindStringSubmatch(pe.Detail); m != nil {
			field = m[1]
		}
	}
	return &connector.RefusedError{Field: field, Code: pe.Code, Reason: pe.Message, Err: err}
}

var uniqueKey = regexp.MustCompile(`^Key \(([^)]+)\)=`)

// definite reports whether an SQLSTATE refuses the data or the statement
// for good, by its class (the first two characters; see PostgreSQL's
// "Appendix A. PostgreSQL Error Codes"): 0A feature not supported, 21
// cardinality violation, 22 data exception, 23 integrity constraint
// violation (not-null, foreign key, unique, check, exclusion), 27
// triggered data change violation, 42 syntax error or access rule
// violation, 44 WITH CHECK OPTION violation, 54 program limit exceeded,
// P0 PL/pgSQL raise (a trigger refusing the row).
func definite(code string) bool {
	if len(code) != 5 {
		return false
	}
	switch code[:2] {
	case "0A", "21", "22", "23", "27", "42", "44", "54", "P0":
		return true
	}
	return false
}
