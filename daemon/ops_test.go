package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	_ "github.com/syncd-io/syncd/connector/csv"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// csvEnv is a daemon with one CSV connector against an emulator behind a
// proxy that can refuse the create of chosen externalIds with a 400.
type csvEnv struct {
	t      *testing.T
	emu    *emulator.Emulator
	srv    *httptest.Server
	csv    string
	cfg    *config.Config
	d      *daemon.Daemon
	mu     sync.Mutex
	refuse map[string]bool
	down   bool // answer 503 to everything
	fail   int  // answer 503 to that many next requests
}

const envAPIKey = "sk-test-0123456789-SECRET-API-KEY"

func newCSVEnv(t *testing.T, rows int, log *logrus.Logger, mod func(*configfile.File)) *csvEnv {
	t.Helper()
	e := &csvEnv{t: t, refuse: map[string]bool{}}
	e.emu = emulator.New(emulator.Options{APIKey: envAPIKey, Rate: -1})
	t.Cleanup(e.emu.Close)
	e.srv = httptest.NewServer(e.proxy(e.emu.Handler()))
	t.Cleanup(e.srv.Close)

	dir := t.TempDir()
	e.csv = filepath.Join(dir, "contacts.csv")
	e.writeCSV(rows)
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.srv.URL, APIKey: "${TEST_API_KEY}", RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": e.csv},
			Mapping:  configfile.Names(),
		}},
	}
	if mod != nil {
		mod(&f)
	}
	cfg, err := config.ParseConfig(f.YAML(), func(k string) string {
		if k == "TEST_API_KEY" {
			return envAPIKey
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	if log == nil {
		log = quiet()
	}
	e.d, err = daemon.New(context.Background(), cfg, daemon.Options{Log: log, Version: "v1.2.3-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.d.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// proxy answers 503 while the env is down or failing, refuses the
// creates of the chosen externalIds, and passes the rest to inner.
func (e *csvEnv) proxy(inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		down := e.down || e.fail > 0
		if e.fail > 0 {
			e.fail--
		}
		e.mu.Unlock()
		if down {
			http.Error(w, `{"message":"maintenance","status":503}`, http.StatusServiceUnavailable)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/v1/contacts" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			e.mu.Lock()
			for id := range e.refuse {
				if bytes.Contains(body, []byte(`"externalId":"`+id+`"`)) {
					e.mu.Unlock()
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					fmt.Fprintf(w, `{"message":"phoneNumbers/0/value: <script>alert(1)</script> is not E.164","code":"0100400","status":400,"title":"Bad Request","errors":[]}`)
					return
				}
			}
			e.mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	})
}

func (e *csvEnv) writeCSV(rows int) {
	var b strings.Builder
	b.WriteString("id,first_name,last_name,email\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "row-%d,First%d,Last%d,p%d@example.com\n", i, i, i, i)
	}
	if err := os.WriteFile(e.csv, []byte(b.String()), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *csvEnv) setRefuse(id string, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if on {
		e.refuse[id] = true
	} else {
		delete(e.refuse, id)
	}
}

func (e *csvEnv) failNext(n int) {
	e.mu.Lock()
	e.fail = n
	e.mu.Unlock()
}

func (e *csvEnv) setDown(down bool) {
	e.mu.Lock()
	e.down = down
	e.mu.Unlock()
}

func (e *csvEnv) scrape() string {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func checkOK(t *testing.T, checks []admin.Check, name string, want bool) {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			if c.OK != want {
				t.Errorf("readiness check %s = %v (%s), want %v", name, c.OK, c.Detail, want)
			}
			return
		}
	}
	t.Errorf("no readiness check %s in %+v", name, checks)
}

func TestStatusMetricsAndDeadLetters(t *testing.T) {
	ctx := context.Background()
	e := newCSVEnv(t, 10, nil, nil)
	e.setRefuse("row-3", true)

	// Before any pass: the status comes from an empty state.
	st, err := e.d.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Live || st.Version != "v1.2.3-test" || len(st.Connectors) != 1 || st.Connectors[0].LastRun != nil || st.State.SchemaVersion != state.CurrentSchemaVersion() {
		t.Fatalf("status before any pass = %+v", st)
	}

	sums, err := e.d.RunOnce(ctx)
	if err != nil || sums[0].Created != 9 || sums[0].Failed != 1 {
		t.Fatalf("first pass = %v, %v; want 9 created and 1 failed", sums, err)
	}

	cs := checkStatusAfterPass(t, e)
	checks := e.d.Ready(ctx)
	checkOK(t, checks, "state", true)
	checkOK(t, checks, "workspace", true)
	checkMetricsAfterPass(t, e)
	checkDeadLetterRetries(t, e, cs.LastSuccess)
	checkReverseLettersAndConflicts(t, e)
}

// checkStatusAfterPass checks the status after a first pass that created
// 9 contacts and set one record aside; it returns the connector's.
func checkStatusAfterPass(t *testing.T, e *csvEnv) admin.ConnectorStatus {
	t.Helper()
	st, err := e.d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := st.Connectors[0]
	if cs.Name != "crm" || cs.Type != "csv" || cs.Source != "custom-crm" || cs.Schedule != "@every 1h" || cs.Direction != "to-workspace" {
		t.Errorf("connector identity = %+v", cs)
	}
	if cs.Links != 9 || cs.DeadLetters != 1 || st.DeadLetters != 1 || cs.Running {
		t.Errorf("status counts: links %d, dead letters %d/%d, running %v; want 9, 1, not running", cs.Links, cs.DeadLetters, st.DeadLetters, cs.Running)
	}
	if cs.LastRun == nil || cs.LastRun.Created != 9 || cs.LastRun.Failed != 1 || cs.LastRun.FinishedAt.IsZero() || cs.LastRun.ID == 0 {
		t.Errorf("last run = %+v", cs.LastRun)
	}
	if cs.LastSuccess.IsZero() || !cs.LastSuccess.Equal(cs.LastRun.FinishedAt) {
		t.Errorf("last success = %v, want the last run's end %v (records set aside are not a failed pass)", cs.LastSuccess, cs.LastRun.FinishedAt)
	}
	return cs
}

// checkMetricsAfterPass checks the metrics of that pass.
func checkMetricsAfterPass(t *testing.T, e *csvEnv) {
	t.Helper()
	m := e.scrape()
	for _, want := range []string{
		`syncd_workspace_requests_total{route="POST /v1/contacts",status="201"} 9`,
		`syncd_workspace_requests_total{route="POST /v1/contacts",status="400"} 1`,
		`syncd_records_total{connector="crm",outcome="created"} 9`,
		`syncd_records_total{connector="crm",outcome="failed"} 1`,
		`syncd_runs_total{connector="crm",kind="run",result="ok"} 1`,
		`syncd_run_duration_seconds_count{connector="crm",kind="run"} 1`,
		`syncd_links{connector="crm"} 9`,
		`syncd_dead_letters{connector="crm"} 1`,
		`syncd_conflicts{connector="crm"} 0`,
		`syncd_last_success_timestamp_seconds{connector="crm"} `,
		`syncd_workspace_rate_limiter_wait_seconds_total `,
		`syncd_build_info{goversion=`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// checkDeadLetterRetries retries the letter set aside, refused then
// accepted.
func checkDeadLetterRetries(t *testing.T, e *csvEnv, lastSuccess time.Time) {
	t.Helper()
	ctx := context.Background()
	// The dead letter: listed without payload, with the API's reason.
	dls, err := e.d.DeadLetters("crm")
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters = %v, %v", dls, err)
	}
	dl := dls[0]
	if dl.Key != "row-3" || dl.Operation != "sync" || !strings.Contains(dl.Reason, "not E.164") || dl.Payload != nil || dl.ID == 0 {
		t.Errorf("dead letter = %+v", dl)
	}

	// Retried while still refused: it stays, with one more attempt.
	res, err := e.d.RetryDeadLetter(ctx, dl.ID)
	if err != nil || res.Resolved || res.Summary.Failed != 1 {
		t.Errorf("retry while refused = %+v, %v; want not resolved", res, err)
	}
	if again, _ := e.d.DeadLetters("crm"); len(again) != 1 || again[0].Attempts != 2 {
		t.Errorf("after a failed retry: %+v, want one letter with 2 attempts", again)
	}
	// Once the workspace accepts it, the retry creates the contact.
	e.setRefuse("row-3", false)
	res, err = e.d.RetryDeadLetter(ctx, dl.ID)
	if err != nil || !res.Resolved || res.Summary.Created != 1 || res.Summary.Kind != "retry" {
		t.Errorf("retry once accepted = %+v, %v; want resolved with 1 created", res, err)
	}
	if n, _ := e.d.Store().DeadLetters.Count("crm"); n != 0 {
		t.Errorf("%d dead letters left after a successful retry", n)
	}
	if n, _ := e.d.Store().Links.Count("crm"); n != 10 {
		t.Errorf("links = %d after the retry, want 10", n)
	}
	if got := len(e.emu.Contacts()); got != 10 {
		t.Errorf("workspace holds %d contacts, want 10", got)
	}
	if _, err := e.d.RetryDeadLetter(ctx, dl.ID); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("retry of a gone letter = %v, want ErrNotFound", err)
	}
	// A retry pass is no "last success" of the connector.
	if st, _ := e.d.Status(ctx); !st.Connectors[0].LastSuccess.Equal(lastSuccess) {
		t.Errorf("last success moved to %v after a retry", st.Connectors[0].LastSuccess)
	}
}

// checkReverseLettersAndConflicts checks letters of the reverse direction
// and the conflict journal.
func checkReverseLettersAndConflicts(t *testing.T, e *csvEnv) {
	t.Helper()
	ctx := context.Background()
	// Letters of the reverse direction cannot be retried; any can be dropped.
	id, err := e.d.Store().DeadLetters.Add(state.DeadLetter{Connector: "crm", Operation: "writeback", Key: "CT1", Reason: "refused"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.d.RetryDeadLetter(ctx, id); !errors.Is(err, admin.ErrNotRetryable) {
		t.Errorf("retry of a writeback letter = %v, want ErrNotRetryable", err)
	}
	if err := e.d.DropDeadLetter(id); err != nil {
		t.Errorf("drop = %v", err)
	}
	if err := e.d.DropDeadLetter(id); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("second drop = %v, want ErrNotFound", err)
	}

	// Conflicts are listed newest first, with their IDs.
	for _, ext := range []string{"row-1", "row-2"} {
		if _, err := e.d.Store().Conflicts.Add(state.Conflict{Connector: "crm", ExternalID: ext, Policy: "newest-wins", Winner: "workspace"}); err != nil {
			t.Fatal(err)
		}
	}
	cfs, err := e.d.Conflicts("", 1)
	if err != nil || len(cfs) != 1 || cfs[0].ExternalID != "row-2" || cfs[0].ID == 0 {
		t.Errorf("conflicts = %+v, %v; want the newest only", cfs, err)
	}
}

func TestBackupWhileRunning(t *testing.T) {
	ctx := context.Background()
	e := newCSVEnv(t, 50, nil, nil)
	if _, err := e.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := e.d.Backup(&buf)
	if err != nil || n != int64(buf.Len()) || n == 0 {
		t.Fatalf("backup = %d, %v", n, err)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the backup is not a state file: %v", err)
	}
	defer cp.Close()
	if got, _ := cp.Links.Count("crm"); got != 50 {
		t.Errorf("backup holds %d links, want 50", got)
	}
}

func TestReadinessProbesTheWorkspaceSparingly(t *testing.T) {
	ctx := context.Background()
	e := newCSVEnv(t, 0, nil, nil)
	orgCalls := func() int { return e.emu.Stats().Requests[workspace.RouteOrganization] }

	// No call yet: readiness asks the workspace once, then reuses it.
	checkOK(t, e.d.Ready(ctx), "workspace", true)
	checkOK(t, e.d.Ready(ctx), "workspace", true)
	if got := orgCalls(); got != 1 {
		t.Errorf("GET /v1/organization called %d times by two readiness checks, want 1", got)
	}

	// Reachability comes from any answer of the workspace: a fresh daemon
	// whose first pass got answers does not probe.
	e2 := newCSVEnv(t, 3, nil, nil)
	if _, err := e2.d.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	checkOK(t, e2.d.Ready(ctx), "workspace", true)
	if got := e2.emu.Stats().Requests[workspace.RouteOrganization]; got != 0 {
		t.Errorf("readiness probed the workspace %d times after a pass that reached it", got)
	}

	// A workspace that answers only 5xx is not reachable.
	e3 := newCSVEnv(t, 0, nil, nil)
	e3.setDown(true)
	checks := e3.d.Ready(ctx)
	checkOK(t, checks, "workspace", false)
	checkOK(t, checks, "state", true)
}

func TestReadinessOfTheReceiver(t *testing.T) {
	ctx := context.Background()
	e := newCSVEnv(t, 0, nil, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.d.SetReceiver(ln.Addr().String(), nil)
	checkOK(t, e.d.Ready(ctx), "webhooks", true)
	if st, _ := e.d.Status(ctx); st.Webhooks != ln.Addr().String() {
		t.Errorf("status webhooks = %q, want %q", st.Webhooks, ln.Addr())
	}
	ln.Close()
	checkOK(t, e.d.Ready(ctx), "webhooks", false)

	e.d.AddReadyCheck("custom", func(context.Context) error { return errors.New("not yet") })
	checkOK(t, e.d.Ready(ctx), "custom", false)
}

func TestWaitIdleWaitsForAPassInProgress(t *testing.T) {
	e := newCSVEnv(t, 5, nil, nil)
	// A resync through the admin API holds the connector; WaitIdle waits
	// for it, or for its own deadline.
	c, _ := e.d.Connector("crm")
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		_, _ = c.Resync(context.Background(), reconcileOptsWaiting(started, release))
	}()
	<-started
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if e.d.WaitIdle(short) {
		t.Fatal("WaitIdle returned true while a resync was in progress")
	}
	close(release)
	long, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if !e.d.WaitIdle(long) {
		t.Fatal("WaitIdle did not see the resync end")
	}
}

// reconcileOptsWaiting are resync options whose progress report, after
// the first batch, signals started and blocks until release is closed.
func reconcileOptsWaiting(started, release chan struct{}) reconcile.ResyncOptions {
	var once sync.Once
	return reconcile.ResyncOptions{Progress: func(int) {
		once.Do(func() {
			close(started)
			<-release
		})
	}}
}
