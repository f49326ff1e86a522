package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	const dsn = "postgres://app:p@ss word@db.example.com/crm"
	r := newRedactor(dsn)
	r.add("p@ss word")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"whole dsn", errors.New("cannot use " + dsn + " today"), "cannot use [redacted] today"},
		{"bare password", errors.New("auth p@ss word refused"), "auth [redacted] refused"},
		{"query-escaped password", errors.New("url p%40ss+word"), "url [redacted]"},
		{"path-escaped password", errors.New("url p@ss%20word"), "url [redacted]"},
		{"no secret", errors.New("connection refused"), "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.redact(tt.err)
			if got.Error() != tt.want {
				t.Errorf("redact(%q) = %q, want %q", tt.err, got, tt.want)
			}
			if errors.Unwrap(got) != nil && strings.Contains(errors.Unwrap(got).Error(), "p@ss") {
				t.Error("the secret is reachable through Unwrap")
			}
		})
	}

	wrapped := r.redact(fmt.Errorf("dial %s: %w", dsn, context.Canceled))
	if !errors.Is(wrapped, context.Canceled) {
		t.Errorf("redacted error %v is no longer context.Canceled", wrapped)
	}
	if r.redact(nil) != nil {
		t.Error("redact(nil) is not nil")
	}
}
