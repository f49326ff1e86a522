package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// logicalTable creates a contacts table without an updated_at trigger
// (an UPDATE leaves updated_at as it was) and returns settings streaming
// it through a slot and publication of the test's own, dropped at its
// end. The server must run with wal_level=logical (scripts/test
// --prepare-only sets it).
func logicalTable(t *testing.T, mod ...func(*postgres.Settings)) (*pgxpool.Pool, *postgres.Settings) {
	t.Helper()
	pool, sch := schema(t)
	var level string
	queryRow(t, pool, "SHOW wal_level", []any{&level})
	if level != "logical" {
		t.Fatalf("the test server runs with wal_level=%s; run scripts/test --prepare-only to set wal_level=logical", level)
	}
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.contacts (id bigserial PRIMARY KEY, name text, email text,
		tags text[], score int, active bool, updated_at timestamptz NOT NULL DEFAULT now())`)
	slot := pgtest.Name(t, "syncd_")
	t.Cleanup(func() { dropSlotAndPublication(t, pool, slot) })
	s := settings(sch+".contacts", func(s *postgres.Settings) {
		s.Changes = postgres.ChangesLogical
		s.Slot = slot
	})
	for _, m := range mod {
		m(s)
	}
	return pool, s
}

// dropSlot drops a slot, waiting for the walsender of a closed
// replication connection to release it.
func dropSlot(t *testing.T, pool *pgxpool.Pool, slot string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; ; i++ {
		_, err := pool.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot)
		if err == nil {
			return
		}
		if i == 100 {
			t.Errorf("drop slot %s: %v", slot, err)
			return
		}
		time.Sleep(100 * time.Millisecond) // the walsender may still be ending
	}
}

func dropSlotAndPublication(t *testing.T, pool *pgxpool.Pool, slot string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dropSlot(t, pool, slot)
	if _, err := pool.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{slot}.Sanitize()); err != nil {
		t.Errorf("drop publication %s: %v", slot, err)
	}
}

// pass reads one pass of Changes from checkpoint and returns its batches
// and the checkpoint to go on from.
func pass(t *testing.T, src connector.Source, checkpoint string) (batches, string) {
	t.Helper()
	got := readChanges(t, src, checkpoint, 0)
	cp := checkpoint
	for _, b := range got {
		if b.Checkpoint != "" {
			cp = b.Checkpoint
		}
	}
	return got, cp
}

func describe(recs []connector.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Deleted {
			out = append(out, r.ID+" deleted")
		} else {
			out = append(out, fmt.Sprintf("%s %v", r.ID, r.Fields["name"]))
		}
	}
	return out
}

// TestLogicalEveryChangeArrives streams inserts, updates that leave
// updated_at alone, a key change and hard deletes, in commit order, after
// a first pass that read the table in the slot's snapshot.
func TestLogicalEveryChangeArrives(t *testing.T) {
	pool, s := logicalTable(t)
	tbl := s.Table
	pgtest.Exec(t, pool, `INSERT INTO `+tbl+` (name, email, tags, score, active) VALUES
		('Ada', 'ada@example.com', '{a,b}', 7, true), ('Bob', NULL, NULL, NULL, NULL)`)
	src := openSource(t, s)
	if src.Mode() != "logical, slot "+s.Slot {
		t.Fatalf("mode %q, want logical", src.Mode())
	}

	first, cp := pass(t, src, "")
	if got := describe(first.records()); strings.Join(got, ",") != "1 Ada,2 Bob" {
		t.Fatalf("first pass read %v, want the two rows", got)
	}
	if cp == "" {
		t.Fatal("first pass left no checkpoint")
	}

	steps := []struct {
		name string
		sql  []string
		want string
	}{
		{"insert", []string{`INSERT INTO ` + tbl + ` (name) VALUES ('Cy')`}, "3 Cy"},
		{"update without updated_at", []string{`UPDATE ` + tbl + ` SET name = 'Ada L' WHERE id = 1`}, "1 Ada L"},
		{"hard delete", []string{`DELETE FROM ` + tbl + ` WHERE id = 2`}, "2 deleted"},
		{"key change", []string{`UPDATE ` + tbl + ` SET id = 30 WHERE id = 3`}, "3 deleted,30 Cy"},
		{"commit order", []string{
			`UPDATE ` + tbl + ` SET name = 'x1' WHERE id = 1`,
			`INSERT INTO ` + tbl + ` (id, name) VALUES (40, 'Dee')`,
			`UPDATE ` + tbl + ` SET name = 'x2' WHERE id = 1`,
		}, "40 Dee,1 x2"},
		{"nothing new", nil, ""},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			for _, q := range step.sql {
				pgtest.Exec(t, pool, q)
			}
			var got batches
			got, cp = pass(t, src, cp)
			if d := strings.Join(describe(got.records()), ","); d != step.want {
				t.Errorf("streamed %q, want %q", d, step.want)
			}
		})
	}

	t.Run("records equal the poll reads'", func(t *testing.T) {
		pgtest.Exec(t, pool, `UPDATE `+tbl+` SET tags = '{"x y",z}', score = 9, active = false, email = 'a@b.c' WHERE id = 1`)
		got, next := pass(t, src, cp)
		cp = next
		recs := got.records()
		if len(recs) != 1 {
			t.Fatalf("streamed %d records, want 1", len(recs))
		}
		read, err := src.Get(context.Background(), []string{"1"})
		if err != nil || len(read) != 1 {
			t.Fatalf("Get: %v %v", read, err)
		}
		if fmt.Sprintf("%#v", recs[0].Fields) != fmt.Sprintf("%#v", read[0].Fields) {
			t.Errorf("streamed fields %#v\nread fields     %#v", recs[0].Fields, read[0].Fields)
		}
		if !recs[0].UpdatedAt.Equal(read[0].UpdatedAt) {
			t.Errorf("streamed updated_at %v, read %v", recs[0].UpdatedAt, read[0].UpdatedAt)
		}
	})

	t.Run("count", func(t *testing.T) {
		for _, c := range []struct {
			checkpoint string
			want       connector.Total
		}{
			{"", connector.Total{N: 3, Known: true}}, // the first pass reads the table
			{cp, connector.Total{}},                  // the slot's content is unknown
		} {
			got, err := src.Count(context.Background(), c.checkpoint, false)
			if err != nil || got != c.want {
				t.Errorf("Count(%q) = %+v, %v; want %+v", c.checkpoint, got, err, c.want)
			}
		}
	})

	t.Run("slot confirmed only what was delivered", func(t *testing.T) {
		// The server reads the last status update after the pass ended.
		var confirmed string
		for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(20 * time.Millisecond) {
			queryRow(t, pool, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, []any{&confirmed}, s.Slot)
			if strings.Contains(cp, `"`+confirmed+`"`) {
				break
			}
		}
		if !strings.Contains(cp, `"`+confirmed+`"`) {
			t.Errorf("slot confirmed %s, checkpoint is %s", confirmed, cp)
		}
	})
}

// TestLogicalSchemaChanges: a column retyped mid-stream is read in its
// new type and a column added is no trouble; a large (TOASTed) value an
// update left alone still comes with the record.
func TestLogicalSchemaChanges(t *testing.T) {
	cases := []struct {
		name   string
		before []string // after the first pass
		update string
		check  func(t *testing.T, r connector.Record)
	}{
		{"column retyped and added", []string{
			`ALTER TABLE %[1]s ALTER COLUMN score TYPE text USING 'score ' || score`,
			`ALTER TABLE %[1]s ADD COLUMN extra int`,
		}, `UPDATE %[1]s SET name = 'Ada L', notes = 'short' WHERE id = 1`, func(t *testing.T, r connector.Record) {
			if r.Fields["name"] != "Ada L" || r.Fields["score"] != "score 7" {
				t.Errorf("streamed name %v score %#v, want Ada L and the retyped \"score 7\"", r.Fields["name"], r.Fields["score"])
			}
		}},
		{"unchanged TOASTed value", nil, `UPDATE %[1]s SET name = 'Ada L' WHERE id = 1`, func(t *testing.T, r connector.Record) {
			if n, _ := r.Fields["notes"].(string); len(n) != 10000 || r.Fields["name"] != "Ada L" {
				t.Errorf("streamed name %v and notes of %d characters, want Ada L and the 10000 left alone", r.Fields["name"], len(n))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, s := logicalTable(t)
			pgtest.Exec(t, pool, `ALTER TABLE `+s.Table+` ADD COLUMN notes text`)
			pgtest.Exec(t, pool, `ALTER TABLE `+s.Table+` ALTER COLUMN notes SET STORAGE EXTERNAL`)
			pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (id, name, score, notes) VALUES (1, 'Ada', 7, repeat('x', 10000))`)
			src := openSource(t, s)
			_, cp := pass(t, src, "")
			for _, q := range tc.before {
				pgtest.Exec(t, pool, fmt.Sprintf(q, s.Table))
			}
			pgtest.Exec(t, pool, fmt.Sprintf(tc.update, s.Table))
			got, _ := pass(t, src, cp)
			recs := got.records()
			if len(recs) != 1 {
				t.Fatalf("streamed %d records, want one for row 1", len(recs))
			}
			tc.check(t, recs[0])
		})
	}
}

// TestLogicalLargeTransaction streams one transaction of 2,500 rows in
// batches of 500: every row once, and only the batch that completes the
// transaction carries a checkpoint.
func TestLogicalLargeTransaction(t *testing.T) {
	pool, s := logicalTable(t, func(s *postgres.Settings) { s.BatchSize = 500 })
	src := openSource(t, s)
	_, cp := pass(t, src, "")
	pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) SELECT 'n' || g FROM generate_series(1, 2500) g`)
	got, next := pass(t, src, cp)
	if len(got) < 5 {
		t.Errorf("%d batches, want at least 5", len(got))
	}
	ids := got.ids()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s delivered twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 2500 {
		t.Errorf("%d rows delivered, want 2500", len(seen))
	}
	for i, b := range got[:len(got)-1] {
		if b.Checkpoint != "" && i < 4 {
			t.Errorf("batch %d inside the transaction carries checkpoint %s", i, b.Checkpoint)
		}
	}
	if next == cp {
		t.Error("the checkpoint did not move past the transaction")
	}
}

// TestLogicalCrashReplays stops a pass in the middle (the batch function
// fails as a crash would, before its checkpoint is stored) and starts
// again from the stored checkpoint with a new source: every row arrives,
// and what arrives twice is only what was not confirmed.
func TestLogicalCrashReplays(t *testing.T) {
	pool, s := logicalTable(t, func(s *postgres.Settings) { s.BatchSize = 100 })
	src := openSource(t, s)
	_, cp := pass(t, src, "")
	for i := 0; i < 10; i++ { // ten transactions of 50 rows
		pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) SELECT 'n' || g FROM generate_series(1, 50) g`)
	}
	applied := map[string]int{}
	// unconfirmed are the rows delivered since the last batch with a
	// checkpoint: the only ones a replay may bring again.
	unconfirmed := map[string]bool{}
	stored := cp
	calls := 0
	err := src.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		calls++
		if calls == 4 {
			return errStop // the crash: this batch is not applied
		}
		for _, r := range b.Records {
			applied[r.ID]++
			unconfirmed[r.ID] = true
		}
		if b.Checkpoint != "" {
			stored = b.Checkpoint
			unconfirmed = map[string]bool{}
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("Changes: %v, want the crash", err)
	}
	_ = src.Close()
	again := openSource(t, s)
	got, _ := pass(t, again, stored)
	for _, id := range got.ids() {
		applied[id]++
	}
	if len(applied) != 500 {
		t.Errorf("%d rows applied, want 500 (none lost)", len(applied))
	}
	for id, n := range applied {
		if n > 1 && !unconfirmed[id] {
			t.Errorf("row %s applied %d times, though its transaction was confirmed", id, n)
		}
		if n > 2 {
			t.Errorf("row %s applied %d times", id, n)
		}
	}
}

// TestLogicalChangesWhileStopped: rows changed while no source runs come
// with the next pass of a new source, from the slot.
func TestLogicalChangesWhileStopped(t *testing.T) {
	pool, s := logicalTable(t)
	src := openSource(t, s)
	_, cp := pass(t, src, "")
	_ = src.Close()
	pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) VALUES ('while'), ('stopped')`)
	pgtest.Exec(t, pool, `DELETE FROM `+s.Table+` WHERE name = 'while'`)
	got, _ := pass(t, openSource(t, s), cp)
	if d := strings.Join(describe(got.records()), ","); d != "2 stopped,1 deleted" {
		t.Errorf("after the restart streamed %q", d)
	}
}

// TestLogicalColumnDropped: a mapped column dropped mid-stream stops the
// pass with ErrColumnGone after delivering what came before, and again on
// the next pass (no progress past it, nothing lost).
func TestLogicalColumnDropped(t *testing.T) {
	pool, s := logicalTable(t)
	typ, _ := connector.Lookup(postgres.TypeName)
	ctx := context.Background()
	src, err := typ.Open(ctx, connector.Options{Name: "test", Settings: s, Fields: []string{"name", "email"}})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, cp := pass(t, src, "")
	pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name, email) VALUES ('before', 'b@x.org')`)
	pgtest.Exec(t, pool, `ALTER TABLE `+s.Table+` DROP COLUMN email`)
	pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) VALUES ('after')`)
	for i := range 2 {
		var got batches
		err := src.Changes(ctx, cp, func(_ context.Context, b connector.Batch) error {
			got = append(got, b)
			if b.Checkpoint != "" {
				cp = b.Checkpoint
			}
			return nil
		})
		if !errors.Is(err, postgres.ErrColumnGone) || !strings.Contains(err.Error(), "email") {
			t.Fatalf("pass %d: %v, want ErrColumnGone naming email", i, err)
		}
		if d := strings.Join(describe(got.records()), ","); i == 0 && d != "1 before" {
			t.Errorf("pass %d delivered %q before stopping, want the row before the drop", i, d)
		}
	}
}

// TestLogicalSlotLost: a slot dropped behind syncd's back and a TRUNCATE
// both make Changes ask for a resync (connector.ErrResyncNeeded); the
// resync's Snapshot creates the slot again and reads the table in its
// snapshot, and streaming goes on from the old checkpoint.
func TestLogicalSlotLost(t *testing.T) {
	cases := []struct {
		name string
		lose func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings)
	}{
		{"slot dropped", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			dropSlot(t, pool, s.Slot)
		}},
		{"truncate", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			pgtest.Exec(t, pool, `TRUNCATE `+s.Table)
			pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (id, name) VALUES (100, 'after truncate')`)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, s := logicalTable(t)
			pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) VALUES ('a'), ('b')`)
			src := openSource(t, s)
			_, cp := pass(t, src, "")
			tc.lose(t, pool, s)
			err := src.Changes(context.Background(), cp, func(context.Context, connector.Batch) error { return nil })
			if !errors.Is(err, connector.ErrResyncNeeded) {
				t.Fatalf("Changes: %v, want ErrResyncNeeded", err)
			}
			snap := readSnapshot(t, src)
			var exists bool
			queryRow(t, pool, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, []any{&exists}, s.Slot)
			if !exists {
				t.Fatal("the resync's snapshot did not create the slot again")
			}
			pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (id, name) VALUES (200, 'after resync')`)
			got, _ := pass(t, src, cp)
			all := append(snap.ids(), got.ids()...)
			if !strings.Contains(strings.Join(all, ","), "200") {
				t.Errorf("after the resync read %v and streamed %v, want row 200", snap.ids(), got.ids())
			}
			if strings.Join(got.ids(), ",") != "200" {
				t.Errorf("streamed %v after the resync, want only the row written after it", got.ids())
			}
		})
	}
}

// TestLogicalNotifies: a committed change makes NotifyChanges call within
// a second. (Any write to the server moves the WAL, so other tests' writes
// may notify too: that a caught-up source stays quiet is not asserted.)
func TestLogicalNotifies(t *testing.T) {
	pool, s := logicalTable(t)
	src := openSource(t, s)
	_, _ = pass(t, src, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	done := make(chan error, 1)
	go func() { done <- src.NotifyChanges(ctx, func() { calls.Add(1) }) }()
	time.Sleep(300 * time.Millisecond)
	calls.Store(0)
	start := time.Now()
	pgtest.Exec(t, pool, `INSERT INTO `+s.Table+` (name) VALUES ('new')`)
	for calls.Load() == 0 && time.Since(start) < 2*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	if took := time.Since(start); calls.Load() == 0 || took > time.Second {
		t.Errorf("notified after %v (calls %d), want within a second", took, calls.Load())
	}
	if slot, bytes, ok := src.ReplicationLag(); !ok || slot != s.Slot || bytes <= 0 {
		t.Errorf("ReplicationLag() = %s, %d, %v; want the slot holding the insert's WAL", slot, bytes, ok)
	}
	if mode := src.NotifyMode(); !strings.HasPrefix(mode, "logical, slot "+s.Slot+", ") || !strings.HasSuffix(mode, " behind") {
		t.Errorf("NotifyMode() = %q, want the slot and how far behind", mode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("NotifyChanges: %v", err)
	}
}

// TestLogicalModeChoice: auto streams when it can and otherwise polls,
// saying why and what to change; logical fails with the same reason.
func TestLogicalModeChoice(t *testing.T) {
	cases := []struct {
		name     string
		setup    func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings)
		changes  string
		wantMode string
		wantNote string // in the note (auto) or the error (logical)
	}{
		{"auto on a table", nil, postgres.ChangesAuto, "logical", ""},
		{"auto on a view", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			pgtest.Exec(t, pool, `CREATE VIEW `+s.Table+`_v AS SELECT * FROM `+s.Table)
			s.Table += "_v"
		}, postgres.ChangesAuto, "poll", "keep changes: poll"},
		{"auto without a primary key", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			pgtest.Exec(t, pool, `ALTER TABLE `+s.Table+` DROP CONSTRAINT contacts_pkey`)
		}, postgres.ChangesAuto, "poll", "REPLICA IDENTITY FULL"},
		{"logical without a primary key", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			pgtest.Exec(t, pool, `ALTER TABLE `+s.Table+` DROP CONSTRAINT contacts_pkey`)
		}, postgres.ChangesLogical, "", "no primary key"},
		{"named publication missing", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			s.Publication = s.Slot + "_dba"
		}, postgres.ChangesAuto, "poll", "CREATE PUBLICATION"},
		{"auto as a role that may not replicate", func(t *testing.T, pool *pgxpool.Pool, s *postgres.Settings) {
			s.DSN = roleWithoutReplication(t, pool, s.Table)
		}, postgres.ChangesAuto, "poll", "ALTER ROLE <role> REPLICATION"},
		{"poll", nil, postgres.ChangesPoll, "poll", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, s := logicalTable(t, func(s *postgres.Settings) {})
			s.Changes = tc.changes
			if tc.setup != nil {
				tc.setup(t, pool, s)
			}
			src, err := openErr(t, s)
			if tc.wantMode == "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantNote) || !strings.Contains(err.Error(), "changes") {
					t.Fatalf("open: %v, want an error on changes naming %q", err, tc.wantNote)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer src.Close()
			ps := src.(*postgres.Source)
			if !strings.HasPrefix(ps.Mode(), tc.wantMode) {
				t.Errorf("mode %q, want %s", ps.Mode(), tc.wantMode)
			}
			if notify := ps.NotifyMode(); (tc.wantMode == "poll") != (notify == "") {
				t.Errorf("NotifyMode() = %q in %s mode", notify, tc.wantMode)
			}
			if note := ps.ModeNote(); (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
				t.Errorf("note %q, want one naming %q", note, tc.wantNote)
			}
		})
	}
}

func TestLogicalSettings(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*postgres.Settings)
		want string
	}{
		{"unknown mode", func(s *postgres.Settings) { s.Changes = "stream" }, "changes:"},
		{"slot without syncd", func(s *postgres.Settings) { s.Slot = "crm_slot" }, `slot: "crm_slot" must contain "syncd"`},
		{"slot not a name", func(s *postgres.Settings) { s.Slot = "Syncd-CRM" }, "slot:"},
		{"good", func(s *postgres.Settings) { s.Changes = "auto"; s.Slot = "syncd_crm" }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := settings("contacts", tc.mod)
			errs := s.Validate()
			if tc.want == "" {
				if len(errs) != 0 {
					t.Errorf("errors %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
	if got := postgres.DefaultSlot("CRM-main"); got != "syncd_crm_main" {
		t.Errorf("DefaultSlot = %q", got)
	}
}

// roleWithoutReplication makes a login role that may read and write
// table but neither replicate nor act as a superuser, dropped at the
// test's end, and returns the test server's URL for it.
func roleWithoutReplication(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	role := pgtest.Name(t, "r_")
	schema, _, _ := strings.Cut(table, ".")
	pgtest.Exec(t, pool, `CREATE ROLE `+role+` LOGIN NOSUPERUSER NOREPLICATION`)
	t.Cleanup(func() {
		pgtest.Exec(t, pool, `DROP OWNED BY `+role)
		pgtest.Exec(t, pool, `DROP ROLE `+role)
	})
	pgtest.Exec(t, pool, `GRANT USAGE ON SCHEMA `+schema+` TO `+role)
	pgtest.Exec(t, pool, `GRANT ALL ON `+table+` TO `+role)
	pgtest.Exec(t, pool, `GRANT ALL ON ALL SEQUENCES IN SCHEMA `+schema+` TO `+role)
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}
