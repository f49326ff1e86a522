package postgres

import (
	"errors"
	"net/url"
	"strings"
)

// redactor removes the connection string and its password from error
// messages.
type redactor struct {
	secrets []string
}

func newRedactor(dsn string) *redactor {
	r := &redactor{}
	r.add(dsn)
	return r
}

// add registers a secret and its URL-escaped forms.
func (r *redactor) add(secret string) {
	if secret == "" {
		return
	}
	for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.TrimPrefix(url.UserPassword("", secret).String(), ":")} {
		if s != "" && !contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so that the dsn goes before the password within it.
	for i := 1; i < len(r.secrets); i++ {
		for j := i; j > 0 && len(r.secrets[j]) > len(r.secrets[j-1]); j-- {
			r.secrets[j], r.secrets[j-1] = r.secrets[j-1], r.secrets[j]
		}
	}
}

// redact returns err, or an error of the same meaning for errors.Is
// whose message holds no secret. The original error, secret and all, is
// not reachable through errors.Unwrap.
func (r *redactor) redact(err error) error {
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
