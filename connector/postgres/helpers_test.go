package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

var errStop = errors.New("stop")

// batches is what one read delivered.
type batches []connector.Batch

func (bs batches) ids() []string {
	var ids []string
	for _, b := range bs {
		for _, r := range b.Records {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func (bs batches) records() []connector.Record {
	var out []connector.Record
	for _, b := range bs {
		out = append(out, b.Records...)
	}
	return out
}

func (bs batches) checkpoint(from string) string {
	if len(bs) == 0 {
		return from
	}
	return bs[len(bs)-1].Checkpoint
}

// readChanges reads Changes from checkpoint, stopping after stopAt
// batches when stopAt > 0.
func readChanges(t *testing.T, src connector.Source, checkpoint string, stopAt int) batches {
	t.Helper()
	var got batches
	err := src.Changes(context.Background(), checkpoint, func(_ context.Context, b connector.Batch) error {
		got = append(got, b)
		if stopAt > 0 && len(got) == stopAt {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		t.Fatalf("Changes(%q): %v", checkpoint, err)
	}
	return got
}

func readSnapshot(t *testing.T, src connector.Source) batches {
	t.Helper()
	var got batches
	if err := src.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error {
		got = append(got, b)
		return nil
	}); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return got
}

// schema gives the test a pool and a schema of its own.
func schema(t *testing.T) (*pgxpool.Pool, string) {
	pool := pgtest.Connect(t)
	return pool, pgtest.NewSchema(t, pool)
}

func queryRow(t *testing.T, pool *pgxpool.Pool, sql string, dest []any, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
