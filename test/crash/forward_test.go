package crash

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func row(i int, v string) e2e.Values {
	return e2e.Values{
		First: fmt.Sprintf("First%d", i), Last: fmt.Sprintf("Last%d%s", i, v), Company: fmt.Sprintf("Company %d", i%37),
		Email: fmt.Sprintf("person%d@example.com", i), Phone: fmt.Sprintf("+1415%03d%04d", 200+i/10000, i%10000),
	}
}

// forwardWorld is a table synced to the workspace (direction
// to-workspace) by the binary.
type forwardWorld struct {
	table *e2e.Table
	emu   *emulator.Server
	cfg   string
	rows  int
	rate  float64
}

func newForwardWorld(t *testing.T, rows int, rate float64) *forwardWorld {
	t.Helper()
	return newForwardWorldIn(t, e2e.PostgreSQL, rows, rate, nil)
}

// newForwardWorldIn makes the world's table in d's server, its connector
// given settings (changes: logical, binlog...; default poll).
func newForwardWorldIn(t *testing.T, d *e2e.Dialect, rows int, rate float64, settings map[string]any) *forwardWorld {
	t.Helper()
	w := &forwardWorld{table: e2e.NewTableIn(t, d), rows: rows, rate: rate}
	w.table.InsertN(rows, func(i int) e2e.Values { return row(i, "") })
	w.emu = emulator.NewServer(emulator.Options{Rate: rate, Burst: 20, Latency: 2 * time.Millisecond, Seed: *seed})
	t.Cleanup(w.emu.Close)
	dir := t.TempDir()
	w.cfg = e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: w.emu.URL, Table: w.table.Name, Type: d.Type, DSN: w.table.DSN, StatePath: filepath.Join(dir, "syncd.db"),
		RateLimit: rate, Burst: 20, Direction: "to-workspace", BatchSize: 100, Workers: 4, LogLevel: "warn",
		Settings: settings,
	})
	return w
}

// converged fails the test unless the table and the workspace agree,
// with one contact per row.
func (w *forwardWorld) converged(t *testing.T, when string) {
	t.Helper()
	rows, contacts := w.table.Rows(), w.emu.Contacts()
	if problems := e2e.Agree(rows, contacts); len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… and %d more", len(problems)-20))
		}
		t.Fatalf("%s: %d contacts for %d rows, and:\n  %s", when, len(contacts), len(rows), strings.Join(problems, "\n  "))
	}
}

// editRows changes the last name of n random rows, as an application
// would between runs.
func (w *forwardWorld) editRows(rng *rand.Rand, n int, tag string) {
	for range n {
		id := int64(1 + rng.Intn(w.rows))
		w.table.Set(id, "last_name", fmt.Sprintf("Last%d-%s", id, tag))
	}
}

// TestKillDuringForwardRuns kills `syncd run --once` at random moments
// of an initial sync and its reruns (rows edited in between), then lets
// one run finish: one contact per row, every field equal.
func TestKillDuringForwardRuns(t *testing.T) {
	newForwardWorld(t, 1200, 400).killDuringRuns(t)
}

// killDuringRuns kills `syncd run --once` at random moments of the
// world's initial sync and its reruns (rows edited in between), then
// lets one run finish: both sides agree, and an unchanged rerun writes
// nothing.
func (w *forwardWorld) killDuringRuns(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewSource(*seed))
	hit := 0
	for k := range *kills {
		// Kill within the time the remaining work takes at the rate, so
		// that each kill lands in the middle of the writes.
		left := w.rows - len(w.emu.Contacts()) + 25
		ideal := time.Duration(float64(left) / w.rate * float64(time.Second))
		if killAtRandom(t, rng, 20*time.Millisecond, max(ideal, 100*time.Millisecond), "run", "--once", "--config", w.cfg) {
			hit++
		}
		w.editRows(rng, 25, fmt.Sprintf("k%d", k))
	}
	if hit == 0 {
		t.Fatalf("no kill hit a running syncd: the test proves nothing (raise the rows or lower the rate)")
	}
	before := w.emu.Stats()
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	w.converged(t, fmt.Sprintf("after %d kills and one complete run", hit))
	st := w.emu.Stats()
	t.Logf("%d kills hit; the complete run made %d creates and %d updates; %d creates in all for %d rows",
		hit, st.Requests["POST /v1/contacts"]-before.Requests["POST /v1/contacts"],
		st.Requests["PATCH /v1/contacts/{id}"]-before.Requests["PATCH /v1/contacts/{id}"], st.Requests["POST /v1/contacts"], w.rows)

	// And a run with nothing changed writes nothing.
	before = w.emu.Stats()
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	after := w.emu.Stats()
	for _, route := range []string{"POST /v1/contacts", "PATCH /v1/contacts/{id}", "DELETE /v1/contacts/{id}"} {
		if n := after.Requests[route] - before.Requests[route]; n != 0 {
			t.Errorf("unchanged rerun after the crashes: %d %s", n, route)
		}
	}
}

// TestKillDuringResync makes the workspace drift from the table (contacts
// deleted and edited in the app, rows changed) and loses the state file,
// then kills `syncd resync` at random moments before letting one finish:
// one contact per row, every field equal.
func TestKillDuringResync(t *testing.T) {
	rng := rand.New(rand.NewSource(*seed + 1000))
	w := newForwardWorld(t, 600, 400)
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	w.converged(t, "after the initial sync")

	drift := func(deletes, edits int) {
		contacts := w.emu.Contacts()
		rng.Shuffle(len(contacts), func(i, j int) { contacts[i], contacts[j] = contacts[j], contacts[i] })
		for _, c := range contacts[:deletes] {
			emutest.NewApp(t, w.emu.URL).Delete(c.ID)
		}
		for _, c := range contacts[deletes : deletes+edits] {
			emutest.NewApp(t, w.emu.URL).Patch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Company: workspace.Some("Changed in the app")}})
		}
		w.editRows(rng, edits, "drift")
	}
	drift(60, 80)
	// The state file is lost too: the resync rebuilds the links.
	if err := removeState(w.cfg); err != nil {
		t.Fatal(err)
	}

	// A resync that finished before its kill leaves nothing to repair:
	// drift again, so that each kill lands in the middle of repairs.
	hit := 0
	for attempt := 0; hit < *kills && attempt < 3**kills; attempt++ {
		if killAtRandom(t, rng, 20*time.Millisecond, 400*time.Millisecond, "resync", "--config", w.cfg) {
			hit++
		} else {
			drift(30, 40)
		}
	}
	if hit == 0 {
		t.Fatalf("no kill hit a running resync")
	}
	runOK(t, time.Minute, "resync", "--config", w.cfg)
	w.converged(t, fmt.Sprintf("after %d killed resyncs and one complete one", hit))
}
