package daemon_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// statusProgress is the progress object of GET /status, decoded by the
// names the API promises.
type statusProgress struct {
	Phase           string           `json:"phase"`
	Done            int64            `json:"done"`
	Total           *int64           `json:"total"`
	TotalIsEstimate bool             `json:"totalIsEstimate"`
	Writes          map[string]int64 `json:"writes"`
	RatePerSecond   float64          `json:"ratePerSecond"`
	ETASeconds      *float64         `json:"etaSeconds"`
	StartedAt       time.Time        `json:"startedAt"`
}

type progressPoint struct {
	at time.Time
	p  statusProgress
}

// slowEnv is a daemon syncing CSV rows into an emulator that answers
// each call after a latency and allows rate calls a second (the daemon's
// rate limit too), with the admin API on a test server. Every badEvery-th
// row (0: none) has an e-mail address the workspace refuses.
type slowEnv struct {
	d    *daemon.Daemon
	api  *httptest.Server
	mu   sync.Mutex
	gate chan struct{} // closed while the emulator answers
}

func newSlowEnv(t *testing.T, rows int, rate float64, latency time.Duration, badEvery int) *slowEnv {
	t.Helper()
	e := &slowEnv{gate: make(chan struct{})}
	close(e.gate)
	emu := emulator.New(emulator.Options{APIKey: envAPIKey, Rate: rate, Burst: 20, Latency: latency})
	t.Cleanup(emu.Close)
	inner := emu.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		gate := e.gate
		e.mu.Unlock()
		<-gate
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	path := e2e.WriteCSVConfig(t, t.TempDir(), e2e.CSVOptions{
		EmulatorURL: srv.URL, APIKey: envAPIKey, Rows: rows, BadEvery: badEvery, RateLimit: rate, Burst: 20,
	})
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e.d = d
	e.api = httptest.NewServer((&admin.Server{Daemon: d, Log: logrus.NewEntry(quiet())}).Handler())
	t.Cleanup(e.api.Close)
	t.Cleanup(e.resume)
	return e
}

// pause holds every call to the workspace until resume: the pass stands
// still where it is.
func (e *slowEnv) pause() {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.gate:
		e.gate = make(chan struct{})
	default:
	}
}

func (e *slowEnv) resume() {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.gate:
	default:
		close(e.gate)
	}
}

// watchStatus polls GET /status until stop is closed and returns the
// progress of the crm connector each time it was running.
func watchStatus(t *testing.T, url string, stop <-chan struct{}) <-chan []progressPoint {
	out := make(chan []progressPoint, 1)
	go func() {
		var pts []progressPoint
		defer func() { out <- pts }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			resp, err := http.Get(url + "/status")
			if err != nil {
				t.Error(err)
				return
			}
			var st struct {
				Connectors []struct {
					Name     string          `json:"name"`
					Running  bool            `json:"running"`
					Progress *statusProgress `json:"progress"`
				} `json:"connectors"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil {
				t.Error(err)
				return
			}
			if c := st.Connectors[0]; c.Progress != nil {
				if !c.Running {
					t.Error("a connector with progress is not shown running")
				}
				pts = append(pts, progressPoint{at: time.Now(), p: *c.Progress})
			}
		}
	}()
	return out
}

func TestStatusShowsProgressWithAnHonestETA(t *testing.T) {
	// The emulator's limit is well below what a loaded machine running
	// the race detector can push (about 190 records/s on two busy cores),
	// so that the limit sets the pace, as it does in production.
	const rows, rate = 2000, 130.0
	e := newSlowEnv(t, rows, rate, 5*time.Millisecond, 0)
	d, api := e.d, e.api
	stop := make(chan struct{})
	points := watchStatus(t, api.URL, stop)
	start := time.Now()
	sums, err := d.RunOnce(context.Background())
	end := time.Now()
	close(stop)
	pts := <-points
	if err != nil || sums[0].Created != rows {
		t.Fatalf("run: %v, %+v", err, sums)
	}
	t.Logf("pass of %d records took %s, %d status samples", rows, end.Sub(start).Round(time.Millisecond), len(pts))
	if len(pts) < 20 {
		t.Fatalf("only %d samples of a running pass", len(pts))
	}

	var mid *progressPoint
	grew := 0
	for i, pt := range pts {
		p := pt.p
		if p.StartedAt.Before(start.Add(-time.Second)) || p.StartedAt.After(end) {
			t.Fatalf("sample %d: startedAt %s is not this pass's", i, p.StartedAt)
		}
		if i > 0 {
			if p.Done < pts[i-1].p.Done {
				t.Fatalf("sample %d: done went back from %d to %d", i, pts[i-1].p.Done, p.Done)
			}
			if p.Done > pts[i-1].p.Done {
				grew++
			}
		}
		if p.Phase != "reading" {
			continue
		}
		if p.Total == nil || *p.Total != rows || p.TotalIsEstimate {
			t.Fatalf("sample %d: total %v (estimate %v), want the file's %d rows, exact", i, p.Total, p.TotalIsEstimate, rows)
		}
		if mid == nil && p.Done >= rows/2 {
			mid = &pts[i]
		}
	}
	if grew < 10 {
		t.Errorf("done grew in only %d of %d samples", grew, len(pts))
	}
	if mid == nil {
		t.Fatal("no sample at or after the midpoint")
	}
	if mid.p.ETASeconds == nil || mid.p.RatePerSecond <= 0 || mid.p.Writes["created"] == 0 {
		t.Fatalf("at the midpoint: %+v, want a rate, an ETA and creates", mid.p)
	}
	eta := *mid.p.ETASeconds
	left := end.Sub(mid.at).Seconds()
	errPct := math.Abs(eta-left) / left * 100
	t.Logf("at the midpoint (%d of %d done, %.0f records/s): ETA %.2fs, actually left %.2fs: %.1f%% off",
		mid.p.Done, rows, mid.p.RatePerSecond, eta, left, errPct)
	if errPct > 25 {
		t.Errorf("ETA at the midpoint %.2fs is %.0f%% off the %.2fs actually left (limit 25%%)", eta, errPct, left)
	}

	resp, err := http.Get(api.URL + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var after admin.Status
	if err := json.NewDecoder(resp.Body).Decode(&after); err != nil {
		t.Fatal(err)
	}
	if c := after.Connectors[0]; c.Running || c.Progress != nil {
		t.Errorf("after the pass: running %v, progress %+v", c.Running, c.Progress)
	}
}

func TestStatusShowsTheProgressOfAResyncStartedThroughTheAdminAPI(t *testing.T) {
	const rows = 400
	e := newSlowEnv(t, rows, 200, 0, 0)
	e.pause() // the resync's listing of the workspace waits
	cl := &admin.Client{BaseURL: e.api.URL}
	done := make(chan error, 1)
	go func() {
		_, err := cl.Resync(context.Background(), admin.ResyncRequest{Connector: "crm"})
		done <- err
	}()
	// progressWhen polls /status until the crm connector's progress
	// satisfies ok.
	progressWhen := func(what string, ok func(statusProgress) bool) statusProgress {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			resp, err := http.Get(e.api.URL + "/status")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Connectors []struct {
					Progress *struct {
						Kind string `json:"kind"`
						statusProgress
					} `json:"progress"`
				} `json:"connectors"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if p := st.Connectors[0].Progress; p != nil && ok(p.statusProgress) {
				if p.Kind != "resync" {
					t.Errorf("progress of kind %q, want resync", p.Kind)
				}
				return p.statusProgress
			}
		}
		t.Fatalf("/status never showed the resync %s", what)
		return statusProgress{}
	}
	listing := progressWhen("listing", func(p statusProgress) bool { return p.Phase == "listing" })
	if listing.Done != 0 || listing.Total != nil || listing.ETASeconds != nil || listing.StartedAt.IsZero() {
		t.Errorf("while the workspace listing waits: %+v, want nothing done, total and ETA unknown", listing)
	}
	e.resume()
	reading := progressWhen("reading", func(p statusProgress) bool { return p.Phase == "reading" && p.Done > 0 })
	if reading.Total == nil || *reading.Total != rows || reading.Writes["created"] == 0 {
		t.Errorf("while reading: %+v, want the %d rows as total and creates", reading, rows)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
