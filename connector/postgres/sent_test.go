package postgres

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestMaybeSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"server error", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}), false},
		{"no row", pgx.ErrNoRows, false},
		{"connection never made", &pgconn.ConnectError{}, false},
		{"connection lost after sending", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"context done", context.Canceled, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maybeSent(tc.err); got != tc.want {
				t.Errorf("maybeSent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
