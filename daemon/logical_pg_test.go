package daemon_test

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// logicalEnv is a daemon streaming a table without an updated_at trigger
// through logical replication into an emulated workspace, deleting
// contacts whose rows are deleted.
type logicalEnv struct {
	t     *testing.T
	pool  *pgxpool.Pool
	table string
	emu   *emulator.Server
	cfg   *config.Config
	d     *daemon.Daemon
}

func newLogicalEnv(t *testing.T, rows int) *logicalEnv {
	t.Helper()
	pool := pgtest.Connect(t)
	var level string
	if err := pool.QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil || level != "logical" {
		t.Fatalf("the test server runs with wal_level=%s (%v); run scripts/test --prepare-only to set wal_level=logical", level, err)
	}
	schema := pgtest.NewSchema(t, pool)
	table := schema + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id bigserial PRIMARY KEY, first_name text, last_name text,
		email text, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name, last_name, email)
		SELECT 'First' || i, 'Last' || i, 'p' || i || '@example.com' FROM generate_series(1, $1::int) AS i`, rows)
	slot := pgtest.Name(t, "syncd_")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for i := 0; i < 100; i++ {
			if _, err := pool.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = pool.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{slot}.Sanitize())
	})
	emu := emulator.NewServer(emulator.Options{Rate: -1, RetryBase: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond})
	t.Cleanup(emu.Close)
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(t.TempDir(), "syncd.db")},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres", Direction: policy.ToWorkspace, Schedule: "@every 1h",
			OnSourceDelete: policy.DeleteRemove,
			Settings:       map[string]any{"dsn": pgtest.URL(), "table": table, "changes": "logical", "slot": slot},
			Mapping:        configfile.Names(),
		}},
	}
	cfg, err := config.ParseConfig(f.YAML(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return &logicalEnv{t: t, pool: pool, table: table, emu: emu, cfg: cfg, d: d}
}

// names returns the workspace's contacts as sorted "first last" strings.
func (e *logicalEnv) names() []string {
	var out []string
	for _, c := range e.emu.Contacts() {
		out = append(out, deref(c.DefaultFields.FirstName)+" "+deref(c.DefaultFields.LastName))
	}
	sort.Strings(out)
	return out
}

func (e *logicalEnv) run() error {
	e.t.Helper()
	_, err := e.d.RunOnce(context.Background())
	return err
}

// TestPGLogicalForward runs the forward direction on the stream: inserts,
// updates that leave updated_at alone and hard deletes reach the
// workspace; a slot dropped behind syncd's back leads to a resync by
// itself; a TRUNCATE is a mass delete the guard stops.
func TestPGLogicalForward(t *testing.T) {
	e := newLogicalEnv(t, 40)
	if err := e.run(); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if got := len(e.names()); got != 40 {
		t.Fatalf("after the first pass the workspace holds %d contacts, want 40", got)
	}

	steps := []struct {
		name            string
		sql             []string
		present, absent []string
		count           int
	}{
		{"update without updated_at, insert, hard delete", []string{
			`UPDATE ` + e.table + ` SET first_name = 'Ada' WHERE id = 1`,
			`INSERT INTO ` + e.table + ` (id, first_name, last_name) VALUES (100, 'New', 'Row')`,
			`DELETE FROM ` + e.table + ` WHERE id = 2`,
		}, []string{"Ada Last1", "New Row"}, []string{"First1 Last1", "First2 Last2"}, 40},
		{"slot dropped: resync by itself", []string{
			`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'syncd_testpglogicalforward%'`,
			`DELETE FROM ` + e.table + ` WHERE id = 3`, // lost with the slot: only a resync sees it
		}, []string{"Ada Last1", "New Row"}, []string{"First3 Last3"}, 39},
		{"stream goes on after the resync", []string{
			`UPDATE ` + e.table + ` SET last_name = 'Lovelace' WHERE id = 1`,
		}, []string{"Ada Lovelace"}, []string{"Ada Last1"}, 39},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			for _, q := range step.sql {
				e.exec(q)
			}
			if err := e.run(); err != nil {
				t.Fatalf("pass: %v", err)
			}
			e.check(step.present, step.absent, step.count)
		})
	}

	t.Run("truncate stopped by the mass-delete guard", func(t *testing.T) {
		pgtest.Exec(t, e.pool, `TRUNCATE `+e.table)
		err := e.run()
		if !errors.Is(err, reconcile.ErrMassDelete) {
			t.Fatalf("pass after TRUNCATE: %v, want the mass-delete guard", err)
		}
		e.check([]string{"Ada Lovelace", "New Row"}, nil, 39)
	})
}

func (e *logicalEnv) check(present, absent []string, count int) {
	e.t.Helper()
	names := e.names()
	have := map[string]bool{}
	for _, n := range names {
		if have[n] {
			e.t.Errorf("contact %s twice", n)
		}
		have[n] = true
	}
	for _, n := range present {
		if !have[n] {
			e.t.Errorf("no contact %s", n)
		}
	}
	for _, n := range absent {
		if have[n] {
			e.t.Errorf("contact %s still there", n)
		}
	}
	if len(names) != count {
		e.t.Errorf("%d contacts, want %d", len(names), count)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// exec runs a statement, waiting while it finds the slot still held by
// the walsender of the replication connection a pass just closed.
func (e *logicalEnv) exec(q string) {
	e.t.Helper()
	for i := 0; ; i++ {
		_, err := e.pool.Exec(context.Background(), q)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" && i < 100 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			e.t.Fatalf("exec %q: %v", q, err)
		}
		return
	}
}
