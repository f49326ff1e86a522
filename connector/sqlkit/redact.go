package sqlkit

import (
	"errors"
	"net/url"
	"slices"
	"strings"
)

// Redactor removes a connection string and its password from error
// messages.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a redactor of dsn.
func NewRedactor(dsn string) *Redactor {
	r := &Redactor{}
	r.Add(dsn)
	return r
}

// Add registers a secret and its URL-escaped forms.
func (r *Redactor) Add(secret string) {
	if secret == "" {
		return
	}
	for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.TrimPrefix(url.UserPassword("", secret).String(), ":")} {
		if s != "" && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so that the dsn goes before the password within it.
	slices.SortStableFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// Redact returns err, or an error of the same meaning for errors.Is
// whose message holds no secret. The original error, secret and all, is
// not reachable through errors.Unwrap.
func (r *Redactor) Redact(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range r.secrets {
		clean = strings.ReplaceAll(clean, s, "[redacted]")
	}
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, cause: err}
}

type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// Is lets errors.Is see through the redaction (for context errors)
// without exposing the cause.
func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }
