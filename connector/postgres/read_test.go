package postgres_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// TestThousandRowsShareOneUpdatedAt reads 1,000 rows written by one
// statement (one updated_at) in batches of 7: every batch boundary falls
// inside the group, and nothing may be skipped or repeated.
func TestThousandRowsShareOneUpdatedAt(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.contacts (id bigserial PRIMARY KEY, name text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.contacts (name) SELECT 'n' || g FROM generate_series(1, 1000) g`)
	var distinct int
	queryRow(t, pool, `SELECT count(DISTINCT updated_at) FROM `+sch+`.contacts`, []any{&distinct})
	if distinct != 1 {
		t.Fatalf("rows have %d distinct updated_at, want 1", distinct)
	}
	src := openSource(t, settings(sch+".contacts", func(s *postgres.Settings) { s.BatchSize = 7 }))

	want := make([]string, 1000)
	for i := range want {
		want[i] = strconv.Itoa(i + 1)
	}

	t.Run("one read", func(t *testing.T) {
		got := readChanges(t, src, "", 0)
		if len(got) != 143 {
			t.Errorf("read took %d batches, want 143", len(got))
		}
		if ids := got.ids(); !equalStrings(ids, want) {
			t.Errorf("read %d ids, not 1..1000 once each in order: %v...", len(ids), ids[:min(len(ids), 20)])
		}
		if rest := readChanges(t, src, got.checkpoint(""), 0); len(rest) != 0 {
			t.Errorf("a read from the last checkpoint delivered %d more records", len(rest.ids()))
		}
	})

	t.Run("one batch per run", func(t *testing.T) {
		var ids []string
		cp := ""
		runs := 0
		for ; runs < 200; runs++ {
			got := readChanges(t, src, cp, 1)
			if len(got) == 0 {
				break
			}
			ids = append(ids, got.ids()...)
			cp = got.checkpoint(cp)
		}
		if runs != 143 || !equalStrings(ids, want) {
			t.Errorf("%d runs read %d ids; want 143 runs reading 1..1000 once each in order", runs, len(ids))
		}
	})

	t.Run("crash and resume", func(t *testing.T) {
		for _, k := range []int{1, 2, 71, 142, 143} {
			before := readChanges(t, src, "", k)
			after := readChanges(t, src, before.checkpoint(""), 0)
			if ids := append(before.ids(), after.ids()...); !equalStrings(ids, want) {
				t.Errorf("crash after batch %d: the reads delivered %d ids, not 1..1000 once each", k, len(ids))
			}
		}
	})
}

// TestIDsCompareInTheirOwnType checks keyset order on ids sharing one
// updated_at: integers numerically (2 before 10), text by collation
// ("10" before "2"), with batches of one so that every resume compares
// ids.
func TestIDsCompareInTheirOwnType(t *testing.T) {
	tests := []struct {
		name, idType string
		ids          []string // as inserted
		want         []string // read order
	}{
		{"integer", "integer", []string{"10", "2"}, []string{"2", "10"}},
		{"bigint beyond float precision", "bigint", []string{"9007199254740993", "9007199254740992", "10"}, []string{"10", "9007199254740992", "9007199254740993"}},
		{"numeric", "numeric", []string{"10.5", "2", "10"}, []string{"2", "10", "10.5"}},
		{"text", "text COLLATE \"C\"", []string{"2", "10"}, []string{"10", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, sch := schema(t)
			pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id `+tt.idType+` PRIMARY KEY, updated_at timestamptz NOT NULL)`)
			pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c SELECT x::`+strings.Fields(tt.idType)[0]+`, '2024-05-01 12:00:00.123456+00' FROM unnest($1::text[]) x`, tt.ids)
			src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.BatchSize = 1 }))

			var got []string
			cp := ""
			for run := 0; run <= len(tt.ids); run++ {
				b := readChanges(t, src, cp, 1)
				if len(b) == 0 {
					break
				}
				got = append(got, b.ids()...)
				cp = b.checkpoint(cp)
			}
			if !equalStrings(got, tt.want) {
				t.Errorf("runs of one batch read %v, want %v", got, tt.want)
			}
			if snap := readSnapshot(t, src).ids(); !equalStrings(snap, tt.want) {
				t.Errorf("snapshot read %v, want %v", snap, tt.want)
			}
		})
	}
}

// TestLookbackCatchesALateCommit: a transaction that began before a read
// and commits after it has an updated_at older than the read's
// checkpoint. Without a look-back the next read misses it; with one it
// does not.
func TestLookbackCatchesALateCommit(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id bigserial PRIMARY KEY, name text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	exact := openSource(t, settings(sch+".c"))
	minute := time.Minute
	guarded := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.Lookback = &minute }))

	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO `+sch+`.c (name) VALUES ('late')`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (name) VALUES ('early')`)

	names := func(bs batches) []string {
		var out []string
		for _, r := range bs.records() {
			out = append(out, r.Fields["name"].(string))
		}
		return out
	}
	exactFirst := readChanges(t, exact, "", 0)
	guardedFirst := readChanges(t, guarded, "", 0)
	if got := names(exactFirst); !equalStrings(got, []string{"early"}) {
		t.Fatalf("first read = %v, want only the committed row", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	if got := names(readChanges(t, exact, exactFirst.checkpoint(""), 0)); len(got) != 0 {
		t.Errorf("without look-back the late commit was read (%v); the test no longer shows the hazard", got)
	}
	got := names(readChanges(t, guarded, guardedFirst.checkpoint(""), 0))
	if !equalStrings(got, []string{"late", "early"}) {
		t.Errorf("with look-back the next read = %v, want the late row (and the recent one again)", got)
	}
}

// TestLookbackSettles: rows older than the look-back are not read again.
func TestLookbackSettles(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id bigserial PRIMARY KEY, updated_at timestamptz NOT NULL)`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (updated_at) SELECT now() - interval '1 hour' FROM generate_series(1, 5)`)
	src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.Lookback = nil; s.BatchSize = 2 }))

	first := readChanges(t, src, "", 0)
	if n := len(first.ids()); n != 5 {
		t.Fatalf("first read delivered %d rows, want 5", n)
	}
	if again := readChanges(t, src, first.checkpoint(""), 0); len(again) != 0 {
		t.Errorf("rows an hour old were read again: %v", again.ids())
	}
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (updated_at) VALUES (now())`)
	second := readChanges(t, src, first.checkpoint(""), 0)
	if ids := second.ids(); !equalStrings(ids, []string{"6"}) {
		t.Fatalf("read after a new row = %v, want [6]", ids)
	}
	// The new row is within the default minute: it is read again.
	if ids := readChanges(t, src, second.checkpoint(""), 0).ids(); !equalStrings(ids, []string{"6"}) {
		t.Errorf("read after the new row = %v, want it again while it is within the look-back", ids)
	}
}

// TestCursorColumns covers cursors other than a NOT NULL timestamptz.
func TestCursorColumns(t *testing.T) {
	t.Run("nullable timestamp without time zone", func(t *testing.T) {
		pool, sch := schema(t)
		pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamp)`)
		pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c VALUES (1, '2024-01-01 10:00:00.5'), (2, NULL), (3, '2024-01-01 09:00:00'), (4, NULL)`)
		src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.BatchSize = 1 }))
		first := readChanges(t, src, "", 2)
		rest := readChanges(t, src, first.checkpoint(""), 0)
		if ids := append(first.ids(), rest.ids()...); !equalStrings(ids, []string{"2", "4", "3", "1"}) {
			t.Errorf("read order %v, want rows without a time first, then by time", ids)
		}
		want := time.Date(2024, 1, 1, 10, 0, 0, 5e8, time.UTC)
		if last := rest.records()[len(rest.records())-1]; !last.UpdatedAt.Equal(want) {
			t.Errorf("UpdatedAt = %v, want %v", last.UpdatedAt, want)
		}
		pgtest.Exec(t, pool, `UPDATE `+sch+`.c SET updated_at = '2024-01-02' WHERE id = 4`)
		if ids := readChanges(t, src, rest.checkpoint(""), 0).ids(); !equalStrings(ids, []string{"4"}) {
			t.Errorf("read after an update = %v, want [4]", ids)
		}
	})

	t.Run("bigint version", func(t *testing.T) {
		pool, sch := schema(t)
		pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, version bigint)`)
		pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c VALUES (1, 20), (2, 3), (3, NULL)`)
		src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.Lookback = nil; s.UpdatedAtColumn = "version" }))
		first := readChanges(t, src, "", 0)
		if ids := first.ids(); !equalStrings(ids, []string{"2", "1"}) {
			t.Errorf("read %v, want [2 1] (by version; rows without one are left to snapshots)", ids)
		}
		if ids := readSnapshot(t, src).ids(); !equalStrings(ids, []string{"1", "2", "3"}) {
			t.Errorf("snapshot %v, want every row", ids)
		}
		pgtest.Exec(t, pool, `UPDATE `+sch+`.c SET version = 21 WHERE id = 3`)
		if ids := readChanges(t, src, first.checkpoint(""), 0).ids(); !equalStrings(ids, []string{"3"}) {
			t.Errorf("read after a version bump = %v, want [3]", ids)
		}

		minute := time.Minute
		_, err := openErr(t, settings(sch+".c", func(s *postgres.Settings) { s.Lookback = &minute; s.UpdatedAtColumn = "version" }))
		if err == nil || !strings.Contains(err.Error(), "lookback: ") {
			t.Errorf("open with a look-back on a bigint cursor = %v, want a lookback error", err)
		}
	})
}

func TestValuesReadAsRecordTypes(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (
		id int PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now(),
		i smallint, big bigint, n numeric(10,2), f real, b boolean, d date, ts timestamptz, lts timestamp,
		tags text[], nums int[], j jsonb, u uuid, ch char(4), inf timestamptz, nul text)`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c VALUES (1, now(),
		7, 9007199254740993, 12.5, 1.5, true, '2024-02-29', '2024-05-01 12:30:00.123456+02', '2024-05-01 12:30:00',
		'{a,"b c",NULL}', '{1,2}', '{"a": 1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'ab', 'infinity', NULL)`)
	src := openSource(t, settings(sch+".c"))
	got := readSnapshot(t, src).records()
	if len(got) != 1 {
		t.Fatalf("snapshot has %d records", len(got))
	}
	want := map[string]any{
		"id": int64(1), "i": int64(7), "big": int64(9007199254740993), "n": "12.50", "f": 1.5, "b": true,
		"d":    time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"ts":   time.Date(2024, 5, 1, 10, 30, 0, 123456000, time.UTC),
		"lts":  time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC),
		"tags": []string{"a", "b c", ""}, "nums": []string{"1", "2"},
		"j": `{"a": 1}`, "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "ch": "ab", "inf": "infinity", "nul": nil,
	}
	for k, w := range want {
		g, ok := got[0].Fields[k]
		if !ok {
			t.Errorf("field %s missing", k)
			continue
		}
		if gt, ok := g.(time.Time); ok {
			if wt, ok := w.(time.Time); !ok || !gt.Equal(wt) {
				t.Errorf("field %s = %v, want %v", k, g, w)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("field %s = %#v, want %#v", k, g, w)
		}
	}
	if got[0].UpdatedAt.IsZero() {
		t.Error("UpdatedAt is zero")
	}
}

func TestTableNames(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`."Contact List" ("ID" int PRIMARY KEY, "Full Name" text,
		"Updated At" timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`."Contact List" ("ID", "Full Name") VALUES (1, 'Ada')`)
	public := pgtest.Name(t, "c_")
	pgtest.Exec(t, pool, `CREATE TABLE public.`+public+` (id int PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT now())`)
	t.Cleanup(func() { pgtest.Exec(t, pool, `DROP TABLE public.`+public) })
	pgtest.Exec(t, pool, `INSERT INTO public.`+public+` VALUES (5)`)

	tests := []struct {
		name  string
		s     *postgres.Settings
		want  []string
		field string
	}{
		{"quoted names with spaces", settings(sch+`."Contact List"`, func(s *postgres.Settings) {
			s.IDColumn, s.UpdatedAtColumn = "ID", "Updated At"
		}), []string{"1"}, "Full Name"},
		{"unqualified name on the search path", settings(public), []string{"5"}, "id"},
		{"unquoted upper case folds", settings(strings.ToUpper(public), func(s *postgres.Settings) {
			s.IDColumn, s.UpdatedAtColumn = "ID", "UPDATED_AT"
		}), []string{"5"}, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := openSource(t, tt.s)
			got := readChanges(t, src, "", 0)
			if ids := got.ids(); !equalStrings(ids, tt.want) {
				t.Fatalf("read %v, want %v", ids, tt.want)
			}
			if _, ok := got.records()[0].Fields[tt.field]; !ok {
				t.Errorf("record lacks field %q: %v", tt.field, got.records()[0].Fields)
			}
		})
	}

	t.Run("a name is never SQL", func(t *testing.T) {
		_, err := openErr(t, settings(sch+`."Contact List"; DROP TABLE `+sch+`."Contact List"`))
		if err == nil {
			t.Fatal("open of a table named with SQL succeeded")
		}
		var n int
		queryRow(t, pool, `SELECT count(*) FROM `+sch+`."Contact List"`, []any{&n})
		if n != 1 {
			t.Errorf("table has %d rows after the attempt", n)
		}
	})
}

func TestColumnsAndMappedFields(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, name text, email text, secret text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c VALUES (1, 'Ada', 'ada@example.com', 'x')`)
	ctx := context.Background()

	all := openSource(t, settings(sch+".c"))
	if f, _ := all.Fields(ctx); !equalStrings(f, []string{"id", "name", "email", "secret", "updated_at"}) {
		t.Errorf("Fields() = %v, want every column in order", f)
	}

	limited := func(s *postgres.Settings) { s.Columns = []string{"name", "email"} }
	src := openSource(t, settings(sch+".c", limited))
	if f, _ := src.Fields(ctx); !equalStrings(f, []string{"name", "email"}) {
		t.Errorf("Fields() with columns = %v, want [name email]", f)
	}
	rec := readSnapshot(t, src).records()[0]
	if want := map[string]any{"name": "Ada", "email": "ada@example.com"}; !reflect.DeepEqual(rec.Fields, want) || rec.ID != "1" {
		t.Errorf("record = %s %v, want 1 %v", rec.ID, rec.Fields, want)
	}

	src = openSource(t, settings(sch+".c", limited), "email")
	if rec := readChanges(t, src, "", 0).records()[0]; !reflect.DeepEqual(rec.Fields, map[string]any{"email": "ada@example.com"}) {
		t.Errorf("record with mapped fields [email] = %v", rec.Fields)
	}

	for _, tc := range []struct {
		name   string
		s      *postgres.Settings
		fields []string
		want   string
	}{
		{"mapped field outside columns", settings(sch+".c", limited), []string{"secret"}, `mapped field "secret"`},
		{"mapped field not in table", settings(sch + ".c"), []string{"phone"}, `mapped field "phone"`},
		{"unknown column", settings(sch+".c", func(s *postgres.Settings) { s.Columns = []string{"name", "phone"} }), nil, `columns: no column "phone"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openErr(t, tc.s, tc.fields...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("open = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestBadCheckpoint(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamptz NOT NULL)`)
	src := openSource(t, settings(sch+".c"))
	for _, cp := range []string{"not json", `{"u":"yesterday-ish","id":"1"}`} {
		err := src.Changes(context.Background(), cp, func(context.Context, connector.Batch) error { return nil })
		if err == nil {
			t.Errorf("Changes(%q) succeeded", cp)
		}
	}
}

func TestClosedSource(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamptz NOT NULL)`)
	src := openSource(t, settings(sch+".c"))
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	fn := func(context.Context, connector.Batch) error { return nil }
	for name, err := range map[string]error{
		"Changes":  src.Changes(context.Background(), "", fn),
		"Snapshot": src.Snapshot(context.Background(), fn),
	} {
		if err == nil {
			t.Errorf("%s on a closed source succeeded", name)
		}
	}
	if _, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpDelete, ID: "1"}}); err == nil {
		t.Error("Write on a closed source succeeded")
	}
	_ = fmt.Sprint(src)
}
