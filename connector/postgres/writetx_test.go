package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// threeRows makes a table of rows 1 a, 2 b, 3 c whose name must satisfy
// check, and writes to rows 1, 2 and 3 (or 9 for the second when
// missing) the names A, second and C, in one Write.
func threeRows(t *testing.T, check, second string, missing bool) (*pgxpool.Pool, string, []connector.WriteResult) {
	t.Helper()
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now(),
		name text CHECK (`+check+`)); INSERT INTO `+sch+`.c (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
	src := openSource(t, settings(sch+".c"))
	id2 := "2"
	if missing {
		id2 = "9"
	}
	res := write(t, src,
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": "A"}},
		connector.Change{Op: connector.OpUpdate, ID: id2, Fields: map[string]any{"name": second}},
		connector.Change{Op: connector.OpUpdate, ID: "3", Fields: map[string]any{"name": "C"}},
	)
	return pool, sch, res
}

// TestWriteIsOneTransaction: the changes of one Write commit together
// (their rows carry one transaction id), so that the server flushes its
// log once for them, not once a row.
func TestWriteIsOneTransaction(t *testing.T) {
	pool, sch, res := threeRows(t, "true", "missing", true)
	if res[0].Err != nil || res[2].Err != nil || !errors.Is(res[1].Err, connector.ErrNotFound) {
		t.Fatalf("results %+v, want the missing row's ErrNotFound only", res)
	}
	var xmins int
	if err := pool.QueryRow(context.Background(), `SELECT count(DISTINCT xmin::text) FROM `+sch+`.c WHERE id IN (1, 3)`).Scan(&xmins); err != nil {
		t.Fatal(err)
	}
	if xmins != 1 {
		t.Fatalf("the two updated rows were written by %d transactions, want 1", xmins)
	}
}

// TestWriteRefusalKeepsTheOthers: a change the server refuses aborts the
// shared transaction; the changes are then applied one by one, so that the
// refusal is that change's alone.
func TestWriteRefusalKeepsTheOthers(t *testing.T) {
	pool, sch, res := threeRows(t, "name <> 'bad'", "bad", false)
	var refused *connector.RefusedError
	if res[0].Err != nil || res[2].Err != nil || !errors.As(res[1].Err, &refused) {
		t.Fatalf("results %+v, want the second change refused and the others applied", res)
	}
	rows, _ := pool.Query(context.Background(), `SELECT name FROM `+sch+`.c ORDER BY id`)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A", "b", "C"}; !equalStrings(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
}
