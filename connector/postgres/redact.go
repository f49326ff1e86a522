package postgres

import "github.com/syncd-io/syncd/connector/sqlkit"

// redactor removes the connection string and its password from error
// messages (sqlkit.Redactor).
type redactor struct{ r *sqlkit.Redactor }

func newRedactor(dsn string) *redactor { return &redactor{sqlkit.NewRedactor(dsn)} }

// add registers a secret and its URL-escaped forms.
func (r *redactor) add(secret string) { r.r.Add(secret) }

// redact returns err, or an error of the same meaning for errors.Is
// whose message holds no secret.
func (r *redactor) redact(err error) error { return r.r.Redact(err) }
