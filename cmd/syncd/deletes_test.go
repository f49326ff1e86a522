package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestDeletesCommand: the record deletions the write-back's mass-delete
// guard held are listed by `syncd deletes list`, and `syncd deletes
// approve` deletes their rows in the PostgreSQL table and drops their
// links (`drop` keeps the rows: the daemon test covers it).
func TestDeletesCommand(t *testing.T) {
	pool := pgtest.Connect(t)
	table := pgtest.NewSchema(t, pool) + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id bigserial PRIMARY KEY, first_name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name) SELECT 'First' || i FROM generate_series(1, 10) AS i`)
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres", Direction: policy.Both, OnWorkspaceDelete: policy.DeleteRemove,
			Settings: map[string]any{"dsn": pgtest.URL(), "table": table, "changes": "poll"},
			Mapping:  configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	cfgPath := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfgPath); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var held []state.HeldDelete
	for _, ext := range []string{"2", "4", "6"} {
		l, ok, err := d.Store().Links.Get("db", ext)
		if err != nil || !ok {
			t.Fatalf("link %s: %v %v", ext, ok, err)
		}
		held = append(held, state.HeldDelete{Connector: "db", ContactID: l.ContactID, ExternalID: ext, RecordID: l.RecordID, HeldAt: time.Now()})
	}
	if err := d.Store().HeldDeletes.Put(held); err != nil {
		t.Fatal(err)
	}
	d.Close()

	out, _, err := runMain(t, "deletes", "list", "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"db: 3 record deletions held", "syncd deletes approve --connector db", "syncd deletes drop --connector db"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := runMain(t, "deletes", "approve", "--config", cfgPath); !errors.Is(err, ErrUsage) {
		t.Errorf("approve without --connector: %v, want a usage error", err)
	}
	out, _, err = runMain(t, "deletes", "approve", "--config", cfgPath, "--connector", "db")
	if err != nil || !strings.Contains(out, "db: 3 held record deletions approved") {
		t.Fatalf("approve: %q, %v", out, err)
	}
	var rows int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE id IN (2, 4, 6)`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("rows 2, 4, 6: %d left (%v), want deleted", rows, err)
	}
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&rows); err != nil || rows != 7 {
		t.Errorf("%d rows left (%v), want 7", rows, err)
	}
	out, _, err = runMain(t, "deletes", "list", "--config", cfgPath)
	if err != nil || !strings.Contains(out, "no held deletions") {
		t.Errorf("list after approving: %q, %v", out, err)
	}
}
