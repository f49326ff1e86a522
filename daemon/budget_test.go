package daemon_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// budgetSource is an incremental source of 10 records in batches of 2
// whose system allows budgetAllowance calls: each batch costs one call,
// and a batch that would go past the allowance ends the read with
// connector.ErrBudgetSpent, as a CRM connector with a daily budget does.
type budgetSource struct {
	mu          sync.Mutex
	used        int64
	checkpoints []string // the checkpoint each Changes call started from
}

const (
	budgetRecords   = 10
	budgetAllowance = 3
)

var budgetSources = map[string]*budgetSource{}

type budgetSettings struct{}

func (budgetSettings) Validate() []error { return nil }

func init() {
	connector.Register(connector.Type{
		Name:        "budgettest",
		NewSettings: func() connector.Settings { return &budgetSettings{} },
		Open: func(_ context.Context, o connector.Options) (connector.Source, error) {
			s := &budgetSource{}
			budgetSources[o.Name] = s
			return s, nil
		},
		Incremental: true,
	})
}

func (s *budgetSource) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	s.mu.Lock()
	s.checkpoints = append(s.checkpoints, checkpoint)
	s.mu.Unlock()
	start := 0
	if checkpoint != "" {
		fmt.Sscan(checkpoint, &start)
	}
	for i := start; i < budgetRecords; i += 2 {
		s.mu.Lock()
		if s.used >= budgetAllowance {
			s.mu.Unlock()
			return fmt.Errorf("query page after %d: %w", i, connector.ErrBudgetSpent)
		}
		s.used++
		s.mu.Unlock()
		var b connector.Batch
		for j := i; j < i+2; j++ {
			b.Records = append(b.Records, connector.Record{ID: fmt.Sprint("r", j), UpdatedAt: time.Unix(int64(j), 0),
				Fields: map[string]any{"first": fmt.Sprint("First", j)}})
		}
		b.Checkpoint = fmt.Sprint(i + 2)
		if err := fn(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (s *budgetSource) Snapshot(ctx context.Context, fn connector.BatchFunc) error { return nil }
func (s *budgetSource) Close() error                                               { return nil }

func (s *budgetSource) Quotas() []connector.Quota {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []connector.Quota{{Name: "daily API requests", Used: s.used, Limit: 2 * budgetAllowance, Budget: 0.5}}
}

// renew starts a new day of the system's allowance.
func (s *budgetSource) renew() {
	s.mu.Lock()
	s.used = 0
	s.mu.Unlock()
}

var _ connector.QuotaReporter = (*budgetSource)(nil)

// newBudgetDaemon is a daemon with one budgettest connector; its log
// goes, as JSON, to the buffer returned.
func newBudgetDaemon(t *testing.T) (*daemon.Daemon, *capture.Buffer) {
	t.Helper()
	emu := emulator.NewServer(emulator.Options{APIKey: envAPIKey, Rate: -1})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: "${TEST_API_KEY}"},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "crm", Type: "budgettest", Schedule: "@every 1h",
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first")}}}},
	}
	return newLoggedDaemon(t, f)
}

func TestPassStopsAtAPIBudgetAndResumes(t *testing.T) {
	d, logs := newBudgetDaemon(t)

	// The first pass records 3 batches (6 records) and stops at the budget:
	// not an error of `run --once`, but said in the log, the run history,
	// the status and the metrics.
	sums, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce = %v, want no error for a pass stopped at its budget", err)
	}
	if got := sums[0]; got.Created != 6 || got.Stopped != state.StoppedBudget {
		t.Fatalf("first pass = %+v, want 6 created and stopped at the budget", got)
	}
	if !strings.Contains(logs.String(), `"msg":"sync pass stopped: api budget spent, resuming at the next schedule"`) ||
		!strings.Contains(logs.String(), `"level":"warning"`) {
		t.Errorf("no warning about the budget in the log:\n%s", logs)
	}
	st, err := d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs := st.Connectors[0]
	if cs.LastResult != "budget" || cs.LastRun == nil || cs.LastRun.Stopped != state.StoppedBudget {
		t.Errorf("status lastResult = %q (run %+v), want budget", cs.LastResult, cs.LastRun)
	}
	if len(cs.Quotas) != 1 || cs.Quotas[0].Used != 3 || cs.Quotas[0].Remaining != 0 {
		t.Errorf("status quotas = %+v, want 3 used and 0 left of syncd's budget", cs.Quotas)
	}
	if !cs.LastSuccess.IsZero() {
		t.Errorf("last success = %v after a pass that did not finish", cs.LastSuccess)
	}
	rec := httptest.NewRecorder()
	d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if out := rec.Body.String(); !strings.Contains(out, `syncd_runs_total{connector="crm",kind="run",result="budget"} 1`) ||
		!strings.Contains(out, `syncd_api_quota_used{connector="crm",quota="daily API requests"} 3`) {
		t.Errorf("metrics lack the budget run or the quota:\n%s", out)
	}

	// The next day's pass resumes after the last recorded batch.
	src := budgetSources["crm"]
	src.renew()
	sums, err = d.RunOnce(context.Background())
	if err != nil || sums[0].Created != 4 || sums[0].Stopped != "" {
		t.Fatalf("second pass = %+v, %v; want the 4 remaining records created", sums[0], err)
	}
	if got := src.checkpoints; len(got) != 2 || got[1] != "6" {
		t.Errorf("passes started from checkpoints %q, want the second from \"6\"", got)
	}
	if n, err := d.Store().Links.Count("crm"); err != nil || n != budgetRecords {
		t.Errorf("links = %d, %v; want %d", n, err, budgetRecords)
	}
}

// newLoggedDaemon opens a daemon on the configuration f (its
// ${TEST_API_KEY} set) whose log is kept, as JSON, in the returned buffer.
func newLoggedDaemon(t *testing.T, f configfile.File) (*daemon.Daemon, *capture.Buffer) {
	t.Helper()
	cfg, err := config.ParseConfig(f.YAML(), func(string) string { return envAPIKey })
	if err != nil {
		t.Fatal(err)
	}
	log, logs := capture.Logger(logrus.InfoLevel)
	log.SetFormatter(&logrus.JSONFormatter{})
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, logs
}
