// Package pgtest connects tests to the machine's real PostgreSQL server
// and gives each test a schema of its own. The server's address comes
// from SYNCD_TEST_POSTGRES_URL (default DefaultURL). A test that cannot
// reach the server fails, saying how to start it: tests never skip for
// want of a database.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL is the environment variable holding the test server's address.
const EnvURL = "SYNCD_TEST_POSTGRES_URL"

// DefaultURL is the test server's address when EnvURL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// URL returns the test server's connection string.
func URL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

const howToStart = "start it with `pg_ctlcluster --skip-systemctl-redirect 15 main start` " +
	"(the test database with `createdb -h 127.0.0.1 -U postgres test`), or set " + EnvURL

// Connect returns a pool on the test server, closed at the test's end.
// It creates the URL's database when the server lacks it, and fails the
// test, naming the URL and how to start the server, when it cannot
// connect.
func Connect(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url := URL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := connect(ctx, url)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
		if err = createDatabase(ctx, url); err == nil {
			pool, err = connect(ctx, url)
		}
	}
	if err != nil {
		t.Fatalf("PostgreSQL at %s unreachable: %v\n%s", url, err, howToStart)
	}
	t.Cleanup(pool.Close)
	return pool
}

func connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// createDatabase creates the database of url through the server's
// "postgres" database; a concurrent creation is not an error.
func createDatabase(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database
		return nil
	}
	return err
}

// Name returns a unique identifier for the test, safe as an unquoted
// PostgreSQL name: prefix, the test's name in lower case, a random
// suffix, at most 63 characters.
func Name(t testing.TB, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range strings.ToLower(t.Name()) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 50 {
		name = name[:50]
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	return name + "_" + hex.EncodeToString(suffix[:])
}

// NewSchema creates a uniquely named schema for the test and drops it,
// with everything in it, at the test's end.
func NewSchema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	name := Name(t, "t_")
	Exec(t, pool, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// Exec runs a statement, failing the test on error.
func Exec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tag, err := pool.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
	return tag
}

// Slot returns a unique replication slot name for the test (it contains
// "syncd", as the connector requires) and, at the test's end, drops the
// slot and the publication of the same name (the connector's default
// publication), so that no test leaves a slot holding the server's WAL.
// A connector named strings.TrimPrefix(slot, "syncd_") has this slot by
// default.
//
// A run killed before its cleanup (a soak stopped by hand) leaves its slot
// behind: the same test's next run drops the idle slots and publications
// of its name first.
func Slot(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	slot := Name(t, "syncd_")
	dropLeftSlots(t, pool, slot[:len(slot)-len("_000000000000")])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for {
			_, err := pool.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "55006" && ctx.Err() == nil {
				// object_in_use: the walsender of a closed connection is ending.
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if err != nil {
				t.Errorf("drop slot %s: %v", slot, err)
			}
			break
		}
		if _, err := pool.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{slot}.Sanitize()); err != nil {
			t.Errorf("drop publication %s: %v", slot, err)
		}
	})
	return slot
}

// dropLeftSlots drops the idle replication slots, and their publications,
// that an earlier run of the test named prefix+"_"+suffix left.
func dropLeftSlots(t testing.TB, pool *pgxpool.Pool, prefix string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := pool.Query(ctx, `SELECT pg_drop_replication_slot(slot_name), slot_name FROM pg_replication_slots
		WHERE NOT active AND left(slot_name, length($1) + 1) = $1 || '_' AND length(slot_name) = length($1) + 13`, prefix)
	if err != nil {
		t.Fatalf("drop slots left by earlier runs of %s: %v", prefix, err)
	}
	var left []string
	for rows.Next() {
		var name string
		if err := rows.Scan(nil, &name); err != nil {
			t.Fatalf("drop slots left by earlier runs of %s: %v", prefix, err)
		}
		left = append(left, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatalf("drop slots left by earlier runs of %s: %v", prefix, err)
	}
	for _, name := range left {
		if _, err := pool.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Fatalf("drop publication %s left by an earlier run: %v", name, err)
		}
		t.Logf("dropped replication slot %s and its publication, left by an earlier run", name)
	}
}
