package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	_ "github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/state"
)

// TestOrphanedSlotFoundAndDroppedByName (issue 30): the slot and
// publication of a connector removed from the configuration are reported
// by syncd validate and syncd status, with the WAL the slot holds and the
// command that drops them; `syncd replication drop --slot NAME` drops
// them, where --connector could not (the connector is gone). Before,
// nothing reported them and the slot held WAL until the disk filled.
func TestOrphanedSlotFoundAndDroppedByName(t *testing.T) {
	pool := pgtest.Connect(t)
	sch := pgtest.NewSchema(t, pool)
	table := sch + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id bigserial PRIMARY KEY, first_name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	// What a connector "old" left behind: its slot and publication.
	slot := slotOf(t, pool, table)
	// WAL written since the slot was made is WAL it holds.
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name) SELECT 'n' || i FROM generate_series(1, 1000) AS i`)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: "http://127.0.0.1:1", APIKey: "k"},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres",
			Settings: map[string]any{"dsn": pgtest.URL(), "table": table, "changes": "poll"},
			Mapping:  configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	report := "replication slot " + slot + " on 127.0.0.1:5432/test holds "
	drop := "syncd replication drop --config " + cfg + " --slot " + slot

	_, serr, err := runMain(t, "validate", "--config", cfg)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, serr)
	}
	wantLines(t, "validate's stderr", serr, "warning: "+report, ", with publication "+slot+", and no configured connector uses it", "drop it with "+drop)
	if strings.Contains(serr, report+"0 B") {
		t.Errorf("validate says the slot holds no WAL:\n%s", serr)
	}

	// A state file, as a syncd that ran leaves; no daemon holds it.
	st, err := state.Open(filepath.Join(dir, "syncd.db"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	out, serr, err := runMain(t, "status", "--config", cfg)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, serr)
	}
	wantLines(t, "status", out, "warning: "+report, "drop it with "+drop)

	// The README's command, once the connector is gone, says what to use.
	if _, _, err := runMain(t, "replication", "drop", "--config", cfg, "--connector", "old"); err == nil || !strings.Contains(err.Error(), "use --slot syncd_old") {
		t.Errorf("replication drop --connector old: %v, want it to point at --slot", err)
	}
	// The slot of a configured connector is not an orphan's.
	if _, _, err := runMain(t, "replication", "drop", "--config", cfg, "--slot", "syncd_nobody_has_this"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:5432/test") {
		t.Errorf("replication drop of an unknown slot: %v, want an error naming where it looked", err)
	}

	out, serr, err = runMain(t, "replication", "drop", "--config", cfg, "--slot", slot)
	if err != nil {
		t.Fatalf("replication drop --slot: %v\n%s", err, serr)
	}
	wantLines(t, "replication drop", out, "dropped replication slot "+slot, "dropped publication "+slot)
	var slots, pubs int
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1),
		(SELECT count(*) FROM pg_publication WHERE pubname = $1)`, slot).Scan(&slots, &pubs); err != nil {
		t.Fatal(err)
	}
	if slots != 0 || pubs != 0 {
		t.Errorf("%d slots and %d publications left", slots, pubs)
	}
	if _, serr, err = runMain(t, "validate", "--config", cfg); err != nil || strings.Contains(serr, slot) {
		t.Errorf("validate after the drop: %v, still naming %s:\n%s", err, slot, serr)
	}
}

// slotOf creates a slot of syncd's (uniquely named) and the publication
// of table named like it, as a connector's first pass leaves them, both
// dropped at the test's end if still there.
func slotOf(t *testing.T, pool *pgxpool.Pool, table string) string {
	t.Helper()
	slot := pgtest.Name(t, "syncd_")
	pgtest.Exec(t, pool, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot)
	pgtest.Exec(t, pool, `CREATE PUBLICATION `+slot+` FOR TABLE `+table)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot)
		_, _ = pool.Exec(context.Background(), `DROP PUBLICATION IF EXISTS `+slot)
	})
	return slot
}
