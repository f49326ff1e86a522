package soak

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// Options describe a soak run.
type Options struct {
	// Mode is the table's changes setting: logical or poll (a PostgreSQL
	// table), or binlog (a MariaDB table).
	Mode string
	// Binary is the syncd binary to run.
	Binary string
	// Duration of the edits; Rate is edits per second on both sides
	// together (half each); Rows the table's rows at the start; Active
	// how many contacts are being edited at a time (each retires after a
	// few edits, new ones are created).
	Duration time.Duration
	Rate     float64
	Rows     int
	Active   int
	// Workers are each side's drivers working at once (at least 1).
	Workers int
	// APIRate is the workspace's rate limit (requests per second, burst
	// 10; negative: none), syncd configured to match: at the service's 10/s the writes
	// queue behind each other and faults' retries, as in production.
	APIRate float64
	// Faults is the share of workspace API calls that fail (429, 500,
	// latency of FaultLatency, lost answer).
	Faults       float64
	FaultLatency time.Duration
	// KillEvery is the mean time between SIGKILLs of syncd (0: none).
	KillEvery time.Duration
	// Race is the window within which edits of both sides are a race.
	Race time.Duration
	// Drain bounds the wait for both sides to agree once the edits stop;
	// Settle is how long no write must come for the drain to be over;
	// Quiet is the window after it in which any write is an idle write;
	// GiveUp ends the drain when syncd wrote nothing for that long though
	// the sides disagree.
	Drain, Settle, Quiet, GiveUp time.Duration
	Seed                         int64
	// Out is the folder of the report, the edit log and syncd's output.
	Out string
	// Show is how many findings the report details.
	Show     int
	LogLevel string
}

// world is one soak run: the table, the emulator, syncd as a child
// process, the log of edits.
type world struct {
	t     *testing.T
	o     Options
	table *e2e.Table
	emu   *emulator.Emulator
	url   string
	wire  *Wire
	cfg   string
	addr  string
	log   *Log
	ents  *entities
	ctx   context.Context

	pmu      sync.Mutex // the syncd process
	proc     *e2e.Proc
	syncdLog *os.File
	kills    int
}

func newWorld(t *testing.T, o Options) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, o: o, wire: &Wire{}, ctx: ctx, ents: newEntities()}
	if o.Mode == "binlog" {
		w.table = e2e.NewTableIn(t, e2e.MySQL) // scripts/test --prepare-only turns its binlog on, in ROW format
		w.auditMySQL()
	} else {
		w.table = e2e.NewTable(t)
		var level string
		if err := w.table.Pool.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil || level != "logical" {
			t.Fatalf("the test server runs with wal_level=%s (%v); run scripts/test --prepare-only to set wal_level=logical", level, err)
		}
	}
	w.emu = emulator.New(emulator.Options{
		Seed: o.Seed, Rate: o.APIRate, Burst: 10, FaultRate: 0, FaultLatency: o.FaultLatency,
		RetryBase: 100 * time.Millisecond, RetryMax: 5 * time.Second, MaxAttempts: 12,
		HTTPClient: &http.Client{Transport: w.wire.Transport(), Timeout: 10 * time.Second},
	})
	w.wire.Contact = func(id string) map[string]string {
		for _, c := range w.emu.Contacts() {
			if c.ID == id {
				v := e2e.ContactValues(c)
				return map[string]string{"firstName": v.First, "lastName": v.Last, "company": v.Company}
			}
		}
		return nil
	}
	srv := httptest.NewServer(w.wire.Handler(w.emu.Handler()))
	w.url = srv.URL
	t.Cleanup(func() {
		w.emu.Close()
		srv.Close()
	})
	settings := map[string]any{"changes": o.Mode}
	schedule := "@every 1s"
	switch o.Mode {
	case "logical":
		settings["slot"] = pgtest.Slot(t, w.table.Pool)
		schedule = "@every 1m"
	case "binlog":
		schedule = "@every 1m"
	}
	limit, burst := o.APIRate, 10
	if limit <= 0 { // the emulator unlimited: syncd as fast as it goes
		limit, burst = 1000, 50
	}
	dir := t.TempDir()
	w.addr = e2e.FreeAddr(t)
	w.cfg = e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: w.url, Table: w.table.Name, Type: w.table.Dialect.Type, DSN: w.table.DSN, StatePath: filepath.Join(dir, "syncd.db"),
		Listen: w.addr, PublicURL: "http://" + w.addr + "/webhooks/workspace", Schedule: schedule,
		RateLimit: limit, Burst: burst, LogLevel: o.LogLevel, BatchSize: 25, Settings: settings,
	})
	f, err := os.Create(filepath.Join(o.Out, "syncd.log"))
	if err != nil {
		t.Fatal(err)
	}
	w.syncdLog = f
	t.Cleanup(func() { f.Close() })
	return w
}

// statePath is the state file of the configuration.
func (w *world) statePath() string { return filepath.Join(filepath.Dir(w.cfg), "syncd.db") }

// startSyncd starts `syncd run` and waits for its webhook receiver.
func (w *world) startSyncd() error {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	w.proc = e2e.Start(w.t, w.o.Binary, "run", "--config", w.cfg)
	return e2e.Listening(w.ctx, w.proc, w.addr, time.Minute)
}

// killSyncd SIGKILLs syncd; it reports whether it was running.
func (w *world) killSyncd() bool {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	killed := w.proc.Kill()
	w.saveOutput("SIGKILL")
	if killed {
		w.kills++
	}
	return killed
}

// stopSyncd stops syncd as an operator would (SIGTERM).
func (w *world) stopSyncd() {
	w.pmu.Lock()
	defer w.pmu.Unlock()
	w.proc.Terminate(w.t, time.Minute)
	w.saveOutput("SIGTERM")
}

// saveOutput appends the ended process's output to syncd.log.
func (w *world) saveOutput(how string) {
	fmt.Fprintf(w.syncdLog, "=== syncd ended (%s) at %s\n%s", how, w.log.Stamp(time.Now()), w.proc.Out.String())
}

// killer SIGKILLs syncd about every KillEvery (seeded, 0.7 to 1.3 of it)
// and starts it again after 0.5 to 3 s, until stop is closed.
func (w *world) killer(stop <-chan struct{}, errs chan<- error) {
	rng := newRand(w.o.Seed + 3)
	for {
		every := time.Duration(float64(w.o.KillEvery) * (0.7 + 0.6*rng.Float64()))
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
		w.killSyncd()
		w.log.Event("syncd SIGKILLed")
		down := time.Duration(500+rng.Intn(2500)) * time.Millisecond
		select {
		case <-stop:
			down = 0
		case <-time.After(down):
		}
		if err := w.startSyncd(); err != nil {
			errs <- fmt.Errorf("restart syncd: %w", err)
			return
		}
		w.log.Event(fmt.Sprintf("syncd restarted (down %v)", down))
	}
}

// waitAgree waits until both sides agree, up to timeout; it returns the
// last disagreements.
func (w *world) waitAgree(timeout time.Duration) []string {
	var problems []string
	for deadline := time.Now().Add(timeout); ; {
		problems = e2e.Agree(w.table.Rows(), w.emu.Contacts())
		if len(problems) == 0 || time.Now().After(deadline) {
			return problems
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// writes counts syncd's writes so far: workspace API writes answered, and
// table writes (the audit's rows by application syncd).
func (w *world) writes() (ws, table int) {
	st := w.emu.Stats()
	ws = st.Requests["POST /v1/contacts"] + st.Requests["PATCH /v1/contacts/{id}"] + st.Requests["DELETE /v1/contacts/{id}"]
	q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE who = 'syncd'`, w.table.Audit)
	if w.table.Pool == nil {
		// The MariaDB audit cannot tell who wrote; it is read only once
		// the edits have stopped, when syncd alone writes.
		q = fmt.Sprintf(`SELECT count(*) FROM %s`, w.table.Audit)
	}
	n, err := w.table.Count(w.ctx, q)
	if err != nil {
		w.t.Fatalf("count syncd's table writes: %v", err)
	}
	return ws, int(n)
}

// auditMySQL gives a MariaDB table the audit PostgreSQL's has (e2e), of
// its INSERTs and UPDATEs without the writer's name (writes).
func (w *world) auditMySQL() {
	db := w.table.Name[:strings.Index(w.table.Name, ".")]
	w.table.Audit = db + ".audit"
	w.table.Exec(`CREATE TABLE ` + w.table.Audit + ` (seq BIGINT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6) NOT NULL, op VARCHAR(8), row_id BIGINT)`)
	for _, op := range []string{"INSERT", "UPDATE"} {
		w.table.Exec(fmt.Sprintf(`CREATE TRIGGER %s.audit_%s AFTER %s ON %s FOR EACH ROW INSERT INTO %s (at, op, row_id) VALUES (NOW(6), '%s', NEW.id)`,
			db, strings.ToLower(op), op, w.table.Name, w.table.Audit, op))
	}
}
