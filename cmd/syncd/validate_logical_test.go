package main

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestValidateSaysWhyAutoPolls: a PostgreSQL connector set to changes:
// auto on a view (which logical replication cannot read) is valid and
// polls, and validate says so, naming what to change.
func TestValidateSaysWhyAutoPolls(t *testing.T) {
	pool := pgtest.Connect(t)
	sch := pgtest.NewSchema(t, pool)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.contacts (id bigserial PRIMARY KEY, first_name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `CREATE VIEW `+sch+`.people AS SELECT * FROM `+sch+`.contacts`)
	emu := emulator.New(emulator.Options{APIKey: "k", Rate: -1})
	t.Cleanup(emu.Close)
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: srv.URL, APIKey: "k"},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres",
			Settings: map[string]any{"dsn": pgtest.URL(), "table": sch + ".people", "changes": "auto"},
			Mapping:  configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runMain(t, "validate", "--config", cfg)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, stderr)
	}
	if want := "note: connectors[db]: changes: auto polls: "; !strings.Contains(stderr, want) || !strings.Contains(stderr, "keep changes: poll") {
		t.Errorf("validate said\n%s\nwant a note starting %q that names what to change", stderr, want)
	}
}

// TestReplicationDrop: `syncd replication drop` drops the connector's slot
// and the publication syncd created, and says when there is none.
func TestReplicationDrop(t *testing.T) {
	pool := pgtest.Connect(t)
	sch := pgtest.NewSchema(t, pool)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.contacts (id bigserial PRIMARY KEY, first_name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	slot := slotOf(t, pool, sch+".contacts")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: "http://127.0.0.1:1", APIKey: "k"},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres",
			Settings: map[string]any{"dsn": pgtest.URL(), "table": sch + ".contacts", "changes": "logical", "slot": slot},
			Mapping:  configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		want []string
	}{
		{"slot and publication", []string{"dropped replication slot " + slot, "dropped publication " + slot}},
		{"nothing left", []string{"no slot or publication of syncd's to drop"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runMain(t, "replication", "drop", "--config", cfg, "--connector", "db")
			if err != nil {
				t.Fatalf("replication drop: %v\n%s", err, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("said %q, want %q", out, w)
				}
			}
			var slots, pubs int
			if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1),
				(SELECT count(*) FROM pg_publication WHERE pubname = $1)`, slot).Scan(&slots, &pubs); err != nil {
				t.Fatal(err)
			}
			if slots != 0 || pubs != 0 {
				t.Errorf("%d slots and %d publications left", slots, pubs)
			}
		})
	}
}
