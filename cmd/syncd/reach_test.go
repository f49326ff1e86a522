package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// verbEnv is a configuration that ran once, with what a case seeded in
// its state file.
type verbEnv struct {
	*opsEnv
	pool   *pgxpool.Pool // the postgres environment's
	table  string
	seeded map[string]string // what the seed left for the arguments (a dead letter's ID)
}

// newCSVVerbEnv is a CSV connector against an emulator that ran once:
// row 3's e-mail does not map (a dead letter), row 1's mobile is not a
// phone number (a field warning).
func newCSVVerbEnv(t *testing.T) *verbEnv {
	t.Helper()
	e := &opsEnv{t: t, dir: t.TempDir()}
	e.emu = emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(e.emu.Close)
	csvPath := filepath.Join(e.dir, "contacts.csv")
	rows := "id,first_name,last_name,email,mobile\n1,Ada,Lovelace,ada@example.com,n/a\n2,Alan,Turing,alan@example.com,\n" +
		"3,Grace,Hopper,not an e-mail <script>,\n4,Edsger,Dijkstra,ed@example.com,+1 415 555 0100\n"
	if err := os.WriteFile(csvPath, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	e.state = filepath.Join(e.dir, "syncd.db")
	e.listen = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e.cfg = filepath.Join(e.dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: e.state},
		Admin:     configfile.Admin{Listen: e.listen, Token: "${SYNCD_ADMIN_TOKEN}"},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": csvPath},
			Mapping: configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{
				"firstName":           configfile.From("first_name"),
				"lastName":            configfile.From("last_name"),
				"emails.work":         {From: "email", Transform: []string{"email"}},
				"phoneNumbers.mobile": configfile.From("mobile"),
			}},
		}},
	}
	if err := f.Write(e.cfg); err != nil {
		t.Fatal(err)
	}
	e.must("run", "--once", "--config", e.cfg)
	return &verbEnv{opsEnv: e, seeded: map[string]string{}}
}

// newPostgresVerbEnv is a PostgreSQL table of 6 rows, written back to
// (workspace deletions remove rows), that ran once.
func newPostgresVerbEnv(t *testing.T) *verbEnv {
	t.Helper()
	pool := pgtest.Connect(t)
	table := pgtest.NewSchema(t, pool) + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id bigserial PRIMARY KEY, first_name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name) SELECT 'First' || i FROM generate_series(1, 6) AS i`)
	e := &opsEnv{t: t, dir: t.TempDir()}
	e.emu = emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(e.emu.Close)
	e.state = filepath.Join(e.dir, "syncd.db")
	e.listen = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e.cfg = filepath.Join(e.dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: e.state},
		Admin:     configfile.Admin{Listen: e.listen, Token: "${SYNCD_ADMIN_TOKEN}"},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres", Direction: policy.Both, OnWorkspaceDelete: policy.DeleteRemove,
			Settings: map[string]any{"dsn": pgtest.URL(), "table": table, "changes": "poll"},
			Mapping:  configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	if err := f.Write(e.cfg); err != nil {
		t.Fatal(err)
	}
	e.must("run", "--once", "--config", e.cfg)
	return &verbEnv{opsEnv: e, pool: pool, table: table, seeded: map[string]string{}}
}

// withStore runs fn on the state file, no daemon holding it.
func (e *verbEnv) withStore(fn func(st *state.Store) error) {
	e.t.Helper()
	st, err := state.Open(e.state, state.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	if err := fn(st); err != nil {
		e.t.Fatal(err)
	}
}

// startDaemon starts a daemon on the environment's configuration with
// its admin API and no pass (a pass would change what is asked), and
// returns when it answers, with the function that stops it.
func (e *verbEnv) startDaemon() (stop func()) {
	e.t.Helper()
	cfg, err := config.Load(e.cfg, func(k string) string {
		if k == "SYNCD_ADMIN_TOKEN" {
			return opsToken
		}
		return ""
	})
	if err != nil {
		e.t.Fatal(err)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet, Version: Version, ConfigPath: e.cfg})
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := d.Start(context.Background(), daemon.AdminPart)
	if err != nil {
		d.Close()
		e.t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			r.Stop()
			if err := d.Close(); err != nil {
				e.t.Error(err)
			}
		})
	}
	e.t.Cleanup(stop)
	return stop
}

// The differences that are not the answer: when things happened, how
// long they took, which of the two answered.
var (
	agoRE      = regexp.MustCompile(`\b(\d+h)?(\d+m)?[\d.]+(s|ms|µs) ago\b`)
	timeRE     = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	durationRE = regexp.MustCompile(`duration=\S+|\((\d+h)?(\d+m)?\d+s\)`)
	viaRE      = regexp.MustCompile(`through (the state file|the running daemon at \S+)`)
	bytesRE    = regexp.MustCompile(`\d+ bytes`)
	daemonRE   = regexp.MustCompile(`daemon: (.*) \(status \d+\)`)
	askedRE    = regexp.MustCompile(`\bdaemon: `)
	contactRE  = regexp.MustCompile(`\b[0-9a-f]{24}\b`) // the emulator's contact IDs
	spaceRE    = regexp.MustCompile(`[ \t]+`)
)

func sameAnswer(s string) string {
	s = agoRE.ReplaceAllString(s, "AGO")
	s = timeRE.ReplaceAllString(s, "TIME")
	s = durationRE.ReplaceAllString(s, "D")
	s = viaRE.ReplaceAllString(s, "through VIA")
	s = bytesRE.ReplaceAllString(s, "N bytes")
	s = daemonRE.ReplaceAllString(s, "$1")
	s = askedRE.ReplaceAllString(s, "")
	s = contactRE.ReplaceAllString(s, "CONTACT")
	return spaceRE.ReplaceAllString(s, " ")
}

// statusBody is the status without what only a live daemon knows: the
// first lines (since when it runs, its readiness) and the MODE column
// (how each connector reads its source now).
func statusBody(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "syncd ") || strings.HasPrefix(l, "no daemon holds") || strings.HasPrefix(l, "ready: ") {
			continue
		}
		if cells := columnRE.Split(l, -1); len(cells) > 3 {
			l = strings.Join(append(cells[:2:2], cells[3:]...), "  ")
		}
		keep = append(keep, l)
	}
	return sameAnswer(strings.Join(keep, "\n"))
}

// columnRE separates the cells of a table row (tabwriter's padding).
var columnRE = regexp.MustCompile(`\s{2,}`)

// statusJSONBody is the JSON status without what only a live daemon
// knows (documented as such in admin.Status): that it is live, since
// when, its receiver, its rate limiters, and each connector's mode,
// notice, running pass and quotas.
func statusJSONBody(s string) string {
	var st admin.Status
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return "not a status: " + s
	}
	st.Live, st.StartedAt, st.Webhooks, st.Rates = false, time.Time{}, "", nil
	for i := range st.Connectors {
		c := &st.Connectors[i]
		c.Mode, c.Notice, c.Running, c.Progress, c.Quotas = "", "", false, nil, nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err.Error()
	}
	return sameAnswer(string(b))
}

// verbCase is one verb, asked the same of the state file and of a
// running daemon.
type verbCase struct {
	name string
	env  func(t *testing.T) *verbEnv
	seed func(e *verbEnv, st *state.Store) error
	args func(e *verbEnv) []string
	// want is in the (normalized) answer, or in its error when wantErr.
	want    []string
	wantErr bool
	// body keeps what is compared of the answer (default sameAnswer).
	body func(string) string
	// after checks what the verb changed.
	after func(t *testing.T, e *verbEnv)
}

func seedConflicts(_ *verbEnv, st *state.Store) error {
	for _, c := range []state.Conflict{
		{Connector: "crm", ExternalID: "1", ContactID: "C1", Policy: "newest-wins", Winner: "workspace",
			Workspace: map[string]string{"lastName": "WS"}, Source: map[string]string{"lastName": "CRM"}},
		{Connector: "crm", ExternalID: "2", ContactID: "C2", Policy: "newest-wins", Winner: "crm",
			Workspace: map[string]string{"firstName": "W"}, Source: map[string]string{"firstName": "S"}},
	} {
		if _, err := st.Conflicts.Add(c); err != nil {
			return err
		}
	}
	return nil
}

// seedHeldMatch holds row 9 (not in the CSV) as matching two contacts.
func seedHeldMatch(_ *verbEnv, st *state.Store) error {
	h := reconcile.Held{Record: connector.Record{ID: "9", Fields: map[string]any{"id": "9", "first_name": "Barbara", "last_name": "Liskov", "email": "bl@example.com"}},
		Candidates: []string{"C1", "C2"}, Reason: "2 contacts match email bl@example.com"}
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return st.Matches.PutHeld("crm", "9", raw)
}

// seedDeadLetterID notes the ID of the one dead letter.
func seedDeadLetterID(e *verbEnv, st *state.Store) error {
	dls, err := st.DeadLetters.List("crm")
	if err != nil || len(dls) != 1 {
		return fmt.Errorf("dead letters %v: %w", dls, err)
	}
	e.seeded["deadletter"] = fmt.Sprint(dls[0].ID)
	return nil
}

// seedHeldDeletes holds the deletion of rows 2 and 4.
func seedHeldDeletes(e *verbEnv, st *state.Store) error {
	var held []state.HeldDelete
	for _, ext := range []string{"2", "4"} {
		l, ok, err := st.Links.Get("db", ext)
		if err != nil || !ok {
			return fmt.Errorf("link %s: %v %w", ext, ok, err)
		}
		held = append(held, state.HeldDelete{Connector: "db", ContactID: l.ContactID, ExternalID: ext, RecordID: l.RecordID, HeldAt: time.Now()})
	}
	return st.HeldDeletes.Put(held)
}

func countRows(t *testing.T, e *verbEnv) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+e.table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func args(a ...string) func(*verbEnv) []string {
	return func(e *verbEnv) []string { return append(a, "--config", e.cfg) }
}
