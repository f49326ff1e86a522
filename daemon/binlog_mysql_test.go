package daemon_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/config"
	_ "github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestMySQLBinlogForward runs the forward direction on MariaDB's binlog:
// inserts, updates that leave updated_at alone and hard deletes reach the
// workspace, the mode shows in status; a TRUNCATE is a mass delete the
// guard stops.
func TestMySQLBinlogForward(t *testing.T) {
	e := newBinlogEnv(t, 40)
	d, names := e.d, e.names
	run := func() error { _, err := d.RunOnce(context.Background()); return err }
	if err := run(); err != nil || len(names()) != 40 {
		t.Fatalf("first pass: %v, %d contacts, want 40", err, len(names()))
	}
	if m := d.Connectors()[0].Mode(); !strings.HasPrefix(m, "binlog") {
		t.Errorf("mode %q, want binlog first", m)
	}
	db := e.db
	for _, q := range []string{
		`UPDATE contacts SET first_name = 'Ada' WHERE id = 1`,
		`INSERT INTO contacts (id, first_name, last_name) VALUES (100, 'New', 'Row')`,
		`DELETE FROM contacts WHERE id = 2`,
	} {
		mysqltest.Exec(t, db, q)
	}
	if err := run(); err != nil {
		t.Fatalf("pass: %v", err)
	}
	checkNames(t, names(), []string{"Ada Last1", "New Row"}, []string{"First1 Last1", "First2 Last2"}, 40)

	mysqltest.Exec(t, db, `TRUNCATE TABLE contacts`)
	if err := run(); !errors.Is(err, reconcile.ErrMassDelete) {
		t.Fatalf("pass after TRUNCATE: %v, want the mass-delete guard", err)
	}
	checkNames(t, names(), []string{"Ada Last1", "New Row"}, nil, 40)
}

// binlogEnv is a daemon syncing a MariaDB table of its own to the
// emulated workspace (to-workspace, hard deletes followed) in binlog
// mode, on a schedule of an hour: tests start its passes.
type binlogEnv struct {
	db        *sql.DB
	dsn       string
	emu       *emulator.Server
	cfg       *config.Config
	statePath string
	d         *daemon.Daemon
}

// newBinlogEnv creates the table with rows rows and opens the daemon,
// its configuration changed by mods.
func newBinlogEnv(t *testing.T, rows int, mods ...func(*configfile.File)) *binlogEnv {
	t.Helper()
	e := &binlogEnv{statePath: filepath.Join(t.TempDir(), "syncd.db")}
	_, e.dsn = mysqltest.NewDatabase(t)
	e.db = mysqltest.Open(t, e.dsn)
	mysqltest.Exec(t, e.db, `CREATE TABLE contacts (id BIGINT AUTO_INCREMENT PRIMARY KEY, first_name VARCHAR(100),
		last_name VARCHAR(100), email VARCHAR(200), updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))`)
	mysqltest.Exec(t, e.db, fmt.Sprintf(`INSERT INTO contacts (first_name, last_name, email)
		SELECT CONCAT('First', seq), CONCAT('Last', seq), CONCAT('p', seq, '@example.com') FROM seq_1_to_%d`, rows))
	e.emu = emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(e.emu.Close)
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: e.statePath},
		Connectors: []configfile.Connector{{Name: "shop", Type: "mysql", Direction: policy.ToWorkspace, Schedule: "@every 1h",
			OnSourceDelete: policy.DeleteRemove,
			Settings:       map[string]any{"dsn": e.dsn, "table": "contacts", "changes": "binlog"},
			Mapping:        configfile.Names(),
		}},
	}
	for _, mod := range mods {
		mod(&f)
	}
	var err error
	if e.cfg, err = config.ParseConfig(f.YAML(), func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	e.open(t)
	return e
}

// open opens the daemon on the configuration and state file, closed at
// the test's end.
func (e *binlogEnv) open(t *testing.T) {
	t.Helper()
	d, err := daemon.New(context.Background(), e.cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	e.d = d
	t.Cleanup(func() { e.close(t) })
}

// close closes the daemon, if open.
func (e *binlogEnv) close(t *testing.T) {
	t.Helper()
	if e.d != nil {
		if err := e.d.Close(); err != nil {
			t.Errorf("close the daemon: %v", err)
		}
		e.d = nil
	}
}

// names are the contacts' first and last names, sorted.
func (e *binlogEnv) names() []string {
	var out []string
	for _, c := range e.emu.Contacts() {
		out = append(out, deref(c.DefaultFields.FirstName)+" "+deref(c.DefaultFields.LastName))
	}
	sort.Strings(out)
	return out
}

func checkNames(t *testing.T, names, present, absent []string, count int) {
	t.Helper()
	have := map[string]bool{}
	for _, n := range names {
		if have[n] {
			t.Errorf("contact %s twice", n)
		}
		have[n] = true
	}
	for _, n := range present {
		if !have[n] {
			t.Errorf("no contact %s", n)
		}
	}
	for _, n := range absent {
		if have[n] {
			t.Errorf("contact %s still there", n)
		}
	}
	if len(names) != count {
		t.Errorf("%d contacts, want %d", len(names), count)
	}
}
