package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/bench"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

var (
	builtOnce sync.Once
	builtBin  string
	builtErr  error
)

// buildSyncd builds the syncd binary once per test process.
func buildSyncd(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "syncd-bin-")
		if err != nil {
			builtErr = err
			return
		}
		builtBin = filepath.Join(dir, "syncd")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtBin
}

// throttledEmulator is an emulator behind a limit of its own that can be
// lifted: 429 above rate requests per second, as the service answers.
type throttledEmulator struct {
	emu     *emulator.Emulator
	srv     *http.Server
	url     string
	limiter *rate.Limiter
	limited atomic.Bool
}

func newThrottledEmulator(t *testing.T, perSecond float64) *throttledEmulator {
	t.Helper()
	te := &throttledEmulator{emu: emulator.New(emulator.Options{Rate: -1}), limiter: rate.NewLimiter(rate.Limit(perSecond), 10)}
	te.limited.Store(true)
	inner := te.emu.Handler()
	ln := listenLocal(t)
	te.url = "http://" + ln.Addr().String()
	te.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if te.limited.Load() && strings.HasPrefix(r.URL.Path, "/v1/") && !te.limiter.Allow() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Too many requests","code":"0100429","status":429,"title":"Too Many Requests"}`)
			return
		}
		inner.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = te.srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = te.srv.Close()
		te.emu.Close()
	})
	return te
}

// perExternalID counts the emulator's contacts by externalId.
func (te *throttledEmulator) perExternalID() map[string]int {
	out := map[string]int{}
	for _, c := range te.emu.Contacts() {
		if c.ExternalID != nil {
			out[*c.ExternalID]++
		}
	}
	return out
}

// shutdownEnv is a large CSV source, its configuration and the daemon's
// log file.
type shutdownEnv struct {
	t     *testing.T
	bin   string
	dir   string
	emu   *throttledEmulator
	rows  int
	state string
	logs  string
}

func newShutdownEnv(t *testing.T, rows int) *shutdownEnv {
	e := &shutdownEnv{t: t, bin: buildSyncd(t), dir: t.TempDir(), rows: rows}
	e.emu = newThrottledEmulator(t, 50)
	if err := bench.WriteCSV(filepath.Join(e.dir, "contacts.csv"), rows, nil); err != nil {
		t.Fatal(err)
	}
	e.state = filepath.Join(e.dir, "syncd.db")
	e.logs = filepath.Join(e.dir, "syncd.log")
	return e
}

// config writes a configuration going at perSecond requests per second
// (the emulator allows 50) with batches of batch rows.
func (e *shutdownEnv) config(name string, perSecond float64, batch int) string {
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.url, APIKey: emulator.DefaultAPIKey, RateLimit: perSecond, Burst: 10},
		State:     configfile.State{Path: e.state},
		Admin:     configfile.Admin{Listen: fmt.Sprintf("127.0.0.1:%d", freePort(e.t))},
		Log:       configfile.Log{Level: "info", Format: "json"},
		Connectors: []configfile.Connector{{Name: "bench", Type: "csv", Schedule: "@every 1h", Workers: 4,
			Settings: map[string]any{"path": filepath.Join(e.dir, "contacts.csv"), "batchSize": batch},
			Mapping:  bench.RowsMapping()}},
	}
	path := filepath.Join(e.dir, name)
	if err := f.Write(path); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// start runs `syncd run` on cfg, appending to the log file.
func (e *shutdownEnv) start(cfg string) *exec.Cmd {
	e.t.Helper()
	f, err := os.OpenFile(e.logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(e.bin, "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
		}
		f.Close()
	})
	return cmd
}

// waitContacts waits until the workspace holds at least n contacts.
func (e *shutdownEnv) waitContacts(n int) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(e.emu.emu.Contacts()) < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("only %d contacts after 60s\n%s", len(e.emu.emu.Contacts()), e.readLogs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait waits for cmd to exit within limit and returns its exit code and
// how long it took.
func (e *shutdownEnv) wait(cmd *exec.Cmd, limit time.Duration) (int, time.Duration) {
	e.t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(limit + 20*time.Second):
		_ = cmd.Process.Kill()
		<-done
		e.t.Fatalf("syncd still running %v after the signal\n%s", limit+20*time.Second, e.readLogs())
		return -1, 0
	}
}

func (e *shutdownEnv) readLogs() string {
	b, _ := os.ReadFile(e.logs)
	return string(b)
}

// rerunAndCheck completes the sync with the limit lifted and checks that
// every row became exactly one contact: the state left by the stop let
// the rerun find what the stopped run had created.
//
// With exactCreates, the rerun must create exactly the rows the stopped
// run had not: every contact it made was linked.
func (e *shutdownEnv) rerunAndCheck(before int, exactCreates bool) {
	e.t.Helper()
	e.emu.limited.Store(false)
	cfg := e.config("rerun.yaml", 5000, 500)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, e.bin, "run", "--once", "--config", cfg).CombinedOutput()
	if err != nil {
		e.t.Fatalf("rerun: %v\n%s", err, out)
	}
	counts := e.emu.perExternalID()
	dups := 0
	for i := 1; i <= e.rows; i++ {
		switch n := counts[fmt.Sprint(i)]; {
		case n == 0:
			e.t.Errorf("row %d has no contact after the rerun", i)
		case n > 1:
			dups++
			if dups <= 5 {
				e.t.Errorf("row %d has %d contacts: a duplicate", i, n)
			}
		}
	}
	if total := len(e.emu.emu.Contacts()); total != e.rows {
		e.t.Errorf("%d contacts for %d rows (%d duplicated)", total, e.rows, dups)
	}
	if exactCreates && !strings.Contains(string(out), fmt.Sprintf("created=%d ", e.rows-before)) {
		e.t.Errorf("the rerun should create exactly the %d contacts the stopped run had not:\n%s", e.rows-before, out)
	}
}

// runRecord reads the newest run of the state file.
func (e *shutdownEnv) lastRun() (state.Run, int, int) {
	e.t.Helper()
	st, err := state.Open(e.state, state.Options{ReadOnly: true})
	if err != nil {
		e.t.Fatalf("state after the stop: %v", err)
	}
	defer st.Close()
	r, ok, err := st.Runs.Last("bench")
	if err != nil || !ok {
		e.t.Fatalf("no run recorded: %v", err)
	}
	links, _ := st.Links.Count("bench")
	dead, _ := st.DeadLetters.Count("bench")
	return r, links, dead
}

// TestSIGTERMFinishesTheBatchInFlight runs the real binary on 5,000 rows
// at 50 requests per second (a run of minutes) and sends SIGTERM in the
// middle: syncd finishes the batch in flight, records the run, and exits
// 0 within 10 seconds. Every contact made is linked in state, and a rerun
// creates exactly the rest.
func TestSIGTERMFinishesTheBatchInFlight(t *testing.T) {
	e := newShutdownEnv(t, 5000)
	cmd := e.start(e.config("syncd.yaml", 50, 100))
	e.waitContacts(150)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, took := e.wait(cmd, 10*time.Second)
	logs := e.readLogs()
	t.Logf("exit %d %v after SIGTERM", code, took.Round(time.Millisecond))
	if code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0\n%s", code, logs)
	}
	if took > 10*time.Second {
		t.Errorf("syncd took %v to stop, want at most 10s", took)
	}
	for _, want := range []string{`"msg":"signal received: finishing the batch in flight`, `"signal":"terminated"`, `"msg":"sync pass stopped early"`, `"msg":"all connectors stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q\n%s", want, logs)
		}
	}

	made := len(e.emu.emu.Contacts())
	run, links, dead := e.lastRun()
	t.Logf("stopped after %d of %d contacts; run %+v", made, e.rows, run)
	if made >= e.rows {
		t.Fatal("the run finished before the signal: the test proves nothing")
	}
	if run.FinishedAt.IsZero() || !strings.Contains(run.Err, "context canceled") {
		t.Errorf("the stopped run was not recorded as stopped: %+v", run)
	}
	if run.Created != made {
		t.Errorf("the run recorded %d creates, the workspace holds %d contacts", run.Created, made)
	}
	// The batch in flight finished: every contact is linked, nothing
	// was cut short into a dead letter, and whole batches were written.
	if links != made {
		t.Errorf("%d links for %d contacts: the batch in flight was not finished and recorded", links, made)
	}
	if dead != 0 {
		t.Errorf("%d dead letters after a graceful stop, want 0", dead)
	}
	if made%100 != 0 {
		t.Errorf("%d contacts made: not a whole number of 100-row batches", made)
	}
	e.rerunAndCheck(made, true)
}

// TestSIGTERMWithABatchLongerThanTheDrain: a batch of 800 rows at 50
// requests per second takes 16 s, more than the shutdown budget
// (daemon.ShutdownBudget, 7 s). syncd still exits 0 within 10 seconds;
// the writes the drain cut are not failures
// (no dead letter: the health page and the alerts stay quiet after a
// routine restart), and the rerun repeats the batch without a duplicate.
func TestSIGTERMWithABatchLongerThanTheDrain(t *testing.T) {
	e := newShutdownEnv(t, 2000)
	cmd := e.start(e.config("syncd.yaml", 50, 800))
	e.waitContacts(60)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, took := e.wait(cmd, 10*time.Second)
	t.Logf("exit %d %v after SIGTERM", code, took.Round(time.Millisecond))
	if code != 0 || took > 10*time.Second {
		t.Errorf("exit %d after %v, want 0 within 10s\n%s", code, took, e.readLogs())
	}
	made := len(e.emu.emu.Contacts())
	run, links, dead := e.lastRun()
	if made >= 800 {
		t.Fatalf("the first batch finished (%d contacts): the drain was not cut, the test proves nothing", made)
	}
	if dead != 0 || run.Failed != 0 {
		t.Errorf("%d dead letters, %d failed after a stop: writes cut by the drain were set aside as failures", dead, run.Failed)
	}
	if links > made || links < made-8 {
		t.Errorf("%d links for %d contacts: more unlinked contacts than the 4 workers had in flight", links, made)
	}
	if !strings.Contains(run.Err, "cut short by shutdown") {
		t.Errorf("the stopped run's error = %q, want it to say the shutdown cut it", run.Err)
	}
	e.rerunAndCheck(made, false)
}

// TestSecondSIGTERMExitsAtOnce: a second SIGTERM during the drain ends
// the process at once, and the state it leaves still lets a rerun finish
// without a duplicate.
func TestSecondSIGTERMExitsAtOnce(t *testing.T) {
	e := newShutdownEnv(t, 3000)
	// Batches of 500 rows at 50 requests per second take 10 s: the drain
	// would outlast the test's patience.
	cmd := e.start(e.config("syncd.yaml", 50, 500))
	e.waitContacts(60)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	second := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, _ := e.wait(cmd, 2*time.Second)
	took := time.Since(second)
	t.Logf("exit %d %v after the second SIGTERM", code, took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("syncd took %v to exit after the second SIGTERM, want at once", took)
	}
	if code == 0 {
		t.Errorf("exit status 0 after a forced exit, want non-zero")
	}
	if logs := e.readLogs(); !strings.Contains(logs, `"msg":"second signal: exiting at once"`) {
		t.Errorf("logs lack the second signal's line\n%s", logs)
	}
	made := len(e.emu.emu.Contacts())
	if made >= e.rows {
		t.Fatal("the run finished before the signals: the test proves nothing")
	}
	e.rerunAndCheck(made, false)
}

func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
