package postgres_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

func write(t *testing.T, src *postgres.Source, changes ...connector.Change) []connector.WriteResult {
	t.Helper()
	res, err := src.Write(context.Background(), changes)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(res) != len(changes) {
		t.Fatalf("Write of %d changes returned %d results", len(changes), len(res))
	}
	return res
}

func TestWriteValueTypes(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (
		id bigserial PRIMARY KEY, updated_at timestamptz NOT NULL DEFAULT '2000-01-01 00:00:00+00',
		name text, age int, score numeric(6,2), ratio float8, active boolean, born date, seen timestamptz,
		tags text[], extra jsonb, ref uuid)`)
	src := openSource(t, settings(sch+".c"))
	seen := time.Date(2024, 5, 1, 10, 30, 0, 123456000, time.UTC)

	res := write(t, src, connector.Change{Op: connector.OpCreate, Fields: map[string]any{
		"name": "Ada", "age": int64(36), "score": 99.5, "ratio": 0.25, "active": true,
		"born": time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC), "seen": seen,
		"tags": []string{"vip", `quote " and \ slash`, "comma, inside"}, "extra": []string{"a", "b"},
		"ref": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
	}})
	if res[0].Err != nil || res[0].ID != "1" {
		t.Fatalf("create = %+v, want ID 1", res[0])
	}
	want := map[string]any{
		"id": int64(1), "name": "Ada", "age": int64(36), "score": "99.50", "ratio": 0.25, "active": true,
		"tags": []string{"vip", `quote " and \ slash`, "comma, inside"}, "extra": `["a", "b"]`,
		"ref": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
	}
	check := func(what string) {
		t.Helper()
		recs := readSnapshot(t, src).records()
		if len(recs) != 1 {
			t.Fatalf("%s: %d records", what, len(recs))
		}
		for k, w := range want {
			if g := recs[0].Fields[k]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s: field %s = %#v, want %#v", what, k, g, w)
			}
		}
		if g, _ := recs[0].Fields["seen"].(time.Time); !g.Equal(seen) {
			t.Errorf("%s: seen = %v, want %v", what, recs[0].Fields["seen"], seen)
		}
		if g, _ := recs[0].Fields["born"].(time.Time); !g.Equal(time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: born = %v", what, recs[0].Fields["born"])
		}
		if !recs[0].UpdatedAt.Equal(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: updated_at moved to %v; write-back must leave it to the table", what, recs[0].UpdatedAt)
		}
	}
	check("after create")

	// Strings for typed columns are cast; nil clears; other columns stay.
	res = write(t, src,
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"age": "37", "active": "false", "ref": nil}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"age": "thirty-eight"}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"nickname": "Countess"}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": []string{"a", "b"}}},
		connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"ratio": float64(1) / 3}},
	)
	want["age"], want["active"], want["ref"], want["ratio"] = int64(37), false, nil, float64(1)/3
	if res[0].Err != nil || res[4].Err != nil {
		t.Errorf("valid updates failed: %v; %v", res[0].Err, res[4].Err)
	}
	for i, sub := range map[int]string{1: "integer", 2: `"nickname"`, 3: "list"} {
		if res[i].Err == nil || !strings.Contains(res[i].Err.Error(), sub) {
			t.Errorf("change %d: error %v, want one mentioning %s", i, res[i].Err, sub)
		}
		if errors.Is(res[i].Err, connector.ErrNotFound) {
			t.Errorf("change %d: a bad value is reported as not found", i)
		}
	}
	check("after updates")

	// An update with no fields only checks that the record exists.
	res = write(t, src,
		connector.Change{Op: connector.OpUpdate, ID: "1"},
		connector.Change{Op: connector.OpUpdate, ID: "2"})
	if res[0].Err != nil || !errors.Is(res[1].Err, connector.ErrNotFound) {
		t.Errorf("empty updates = %v, %v; want nil and ErrNotFound", res[0].Err, res[1].Err)
	}
	check("after empty updates")
}

func TestCreateWithDefaultsOnly(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), updated_at timestamptz NOT NULL DEFAULT now())`)
	src := openSource(t, settings(sch+".c"))
	res := write(t, src, connector.Change{Op: connector.OpCreate})
	if res[0].Err != nil || len(res[0].ID) != 36 {
		t.Fatalf("create with no fields = %+v, want a uuid", res[0])
	}
	if ids := readSnapshot(t, src).ids(); !equalStrings(ids, []string{res[0].ID}) {
		t.Errorf("snapshot %v, want the created row", ids)
	}
}

func TestSoftDelete(t *testing.T) {
	for _, tc := range []struct{ name, column, deleted string }{
		{"timestamp column", "deleted_at timestamptz", "deleted_at IS NOT NULL"},
		{"boolean column", "deleted_at boolean NOT NULL DEFAULT false", "deleted_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, sch := schema(t)
			pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, name text,
				updated_at timestamptz NOT NULL DEFAULT now(), `+tc.column+`)`)
			pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
			src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.DeletedAtColumn = "deleted_at" }))
			cp := readChanges(t, src, "", 0).checkpoint("")

			res := write(t, src, connector.Change{Op: connector.OpDelete, ID: "1", Soft: true})
			if res[0].Err != nil {
				t.Fatalf("soft delete: %v", res[0].Err)
			}
			var mark1 string
			queryRow(t, pool, `SELECT deleted_at::text FROM `+sch+`.c WHERE id = 1`, []any{&mark1})
			time.Sleep(2 * time.Millisecond)
			res = write(t, src, connector.Change{Op: connector.OpDelete, ID: "1", Soft: true})
			if res[0].Err != nil {
				t.Errorf("repeated soft delete: %v", res[0].Err)
			}
			var mark2 string
			queryRow(t, pool, `SELECT deleted_at::text FROM `+sch+`.c WHERE id = 1`, []any{&mark2})
			if mark1 != mark2 {
				t.Errorf("repeated soft delete moved the mark from %s to %s", mark1, mark2)
			}
			if ids := readSnapshot(t, src).ids(); !equalStrings(ids, []string{"2", "3"}) {
				t.Errorf("snapshot after soft delete = %v, want [2 3]", ids)
			}

			// A deletion made by the application (moving updated_at) is a
			// Deleted record in Changes.
			pgtest.Exec(t, pool, `UPDATE `+sch+`.c SET deleted_at = `+map[bool]string{true: "true", false: "now()"}[strings.Contains(tc.column, "boolean")]+`, updated_at = now() WHERE id = 2`)
			recs := readChanges(t, src, cp, 0).records()
			if len(recs) != 1 || recs[0].ID != "2" || !recs[0].Deleted {
				t.Errorf("changes after the application's delete = %+v, want record 2 marked Deleted", recs)
			}

			// A hard delete removes the row even with a soft-delete column.
			res = write(t, src, connector.Change{Op: connector.OpDelete, ID: "3"})
			if res[0].Err != nil {
				t.Fatalf("hard delete: %v", res[0].Err)
			}
			var n int
			queryRow(t, pool, `SELECT count(*) FROM `+sch+`.c WHERE `+tc.deleted+` OR id = 3`, []any{&n})
			if n != 2 {
				t.Errorf("%d rows deleted or left, want rows 1 and 2 marked and row 3 gone", n)
			}
			res = write(t, src, connector.Change{Op: connector.OpDelete, ID: "3", Soft: true})
			if !errors.Is(res[0].Err, connector.ErrNotFound) {
				t.Errorf("soft delete of a removed row: %v, want ErrNotFound", res[0].Err)
			}
		})
	}
}

func TestWriteWithDoneContext(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (id, name) VALUES (1, 'a')`)
	src := openSource(t, settings(sch+".c"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Write(ctx, []connector.Change{{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": "b"}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context = %v, want context.Canceled", err)
	}
	var name string
	queryRow(t, pool, `SELECT name FROM `+sch+`.c WHERE id = 1`, []any{&name})
	if name != "a" {
		t.Errorf("the cancelled write changed the row to %q", name)
	}
}

func TestConditionalUpdate(t *testing.T) {
	for _, typ := range []string{"timestamptz", "timestamp"} {
		t.Run(typ, func(t *testing.T) {
			pool, sch := schema(t)
			pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, name text, updated_at `+typ+` NOT NULL DEFAULT '2024-01-01 10:00:00.123456')`)
			pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (id, name) VALUES (1, 'a')`)
			src := openSource(t, settings(sch+".c"))
			ctx := context.Background()
			recs, err := src.Get(ctx, []string{"1"})
			if err != nil || len(recs) != 1 {
				t.Fatalf("Get = %v, %v", recs, err)
			}
			read := recs[0].UpdatedAt

			// Unchanged since the read: applied.
			res := write(t, src, connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": "b"}, IfUnchangedSince: read})
			if res[0].Err != nil {
				t.Fatalf("update of an unchanged row: %v", res[0].Err)
			}
			// Edited in the table since the read: refused, nothing written.
			pgtest.Exec(t, pool, `UPDATE `+sch+`.c SET name = 'table', updated_at = updated_at + interval '1 microsecond' WHERE id = 1`)
			res = write(t, src,
				connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": "app"}, IfUnchangedSince: read},
				connector.Change{Op: connector.OpUpdate, ID: "2", Fields: map[string]any{"name": "app"}, IfUnchangedSince: read})
			if !errors.Is(res[0].Err, connector.ErrChanged) {
				t.Errorf("update of a row changed meanwhile: %v, want ErrChanged", res[0].Err)
			}
			if !errors.Is(res[1].Err, connector.ErrNotFound) {
				t.Errorf("conditional update of a missing row: %v, want ErrNotFound", res[1].Err)
			}
			recs, err = src.Get(ctx, []string{"1"})
			if err != nil || len(recs) != 1 || recs[0].Fields["name"] != "table" {
				t.Fatalf("after the refused update: %v, %v; want name table", recs, err)
			}
			// Without a condition the update applies as before.
			res = write(t, src, connector.Change{Op: connector.OpUpdate, ID: "1", Fields: map[string]any{"name": "app"}})
			if res[0].Err != nil {
				t.Fatalf("unconditional update: %v", res[0].Err)
			}
		})
	}
}

// TestConditionalDelete: a delete conditioned on the change time read
// before deciding deletes nothing when the row was edited since
// (ErrChanged: the edit made after the deletion is weighed first), and
// deletes as before when it was not; a row already soft-deleted stays
// deleted.
func TestConditionalDelete(t *testing.T) {
	for _, tc := range []struct {
		name, deleted string // the deleted_at column, "" for hard deletes
	}{
		{name: "hard delete"},
		{name: "soft delete", deleted: "deleted_at timestamptz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, sch := schema(t)
			cols := "id int PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT '2024-01-01 10:00:00.123456'"
			if tc.deleted != "" {
				cols += ", " + tc.deleted
			}
			pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (`+cols+`)`)
			pgtest.Exec(t, pool, `INSERT INTO `+sch+`.c (id, name) VALUES (1, 'a')`)
			src := openSource(t, settings(sch+".c", func(s *postgres.Settings) {
				if tc.deleted != "" {
					s.DeletedAtColumn = "deleted_at"
				}
			}))
			soft := tc.deleted != ""
			read := func() time.Time {
				t.Helper()
				recs, err := src.Get(context.Background(), []string{"1"})
				if err != nil || len(recs) != 1 {
					t.Fatalf("Get = %v, %v", recs, err)
				}
				return recs[0].UpdatedAt
			}
			before := read()
			pgtest.Exec(t, pool, `UPDATE `+sch+`.c SET name = 'table', updated_at = updated_at + interval '1 microsecond' WHERE id = 1`)
			res := write(t, src, connector.Change{Op: connector.OpDelete, ID: "1", Soft: soft, IfUnchangedSince: before},
				connector.Change{Op: connector.OpDelete, ID: "2", Soft: soft, IfUnchangedSince: before})
			if !errors.Is(res[0].Err, connector.ErrChanged) {
				t.Errorf("delete of a row edited since: %v, want ErrChanged", res[0].Err)
			}
			if !errors.Is(res[1].Err, connector.ErrNotFound) {
				t.Errorf("conditional delete of a missing row: %v, want ErrNotFound", res[1].Err)
			}
			now := read() // still live, with the table's edit
			if res := write(t, src, connector.Change{Op: connector.OpDelete, ID: "1", Soft: soft, IfUnchangedSince: now}); res[0].Err != nil {
				t.Fatalf("delete of a row unchanged since: %v", res[0].Err)
			}
			if recs, err := src.Get(context.Background(), []string{"1"}); err != nil || (len(recs) == 1 && !recs[0].Deleted) {
				t.Fatalf("after the delete Get = %+v, %v; want it gone or marked", recs, err)
			}
			res = write(t, src, connector.Change{Op: connector.OpDelete, ID: "1", Soft: soft, IfUnchangedSince: before})
			if soft && res[0].Err != nil {
				t.Errorf("conditional delete of a row already soft-deleted: %v, want it kept deleted", res[0].Err)
			}
			if !soft && !errors.Is(res[0].Err, connector.ErrNotFound) {
				t.Errorf("conditional delete of a row deleted: %v, want ErrNotFound", res[0].Err)
			}
		})
	}
}
