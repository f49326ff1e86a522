// Package bench measures syncd the way an operator would run it: the real
// binary (`syncd run --once`) as a child process, against a workspace
// emulator served from the benchmarking process, on generated sources.
// Running the daemon as a child keeps its CPU seconds and peak memory
// apart from the emulator's.
//
// Figures are ratios and counts where they can be (wall time against the
// ideal that the rate limit allows, API calls against the minimum), so
// that they hold on a noisy machine.
package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// APIKey is the emulator's key in benchmarks.
const APIKey = "bench-key"

// Env is one benchmark's emulator, folder and binary.
type Env struct {
	Binary string // the syncd binary to run
	Dir    string
	Rate   float64
	Burst  int
	Emu    *emulator.Emulator
	URL    string
	srv    *http.Server
}

// NewEnv starts an emulator limited to rate requests per second.
func NewEnv(binary, dir string, rate float64, burst int) (*Env, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	emu := emulator.New(emulator.Options{APIKey: APIKey, Rate: rate, Burst: burst, Seed: 1})
	srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Env{Binary: binary, Dir: dir, Rate: rate, Burst: burst, Emu: emu, URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the emulator.
func (e *Env) Close() {
	_ = e.srv.Close()
	e.Emu.Close()
}

// Row is the generated record i, in version v (a changed row differs).
func Row(i int, v string) []string {
	return []string{
		fmt.Sprint(i), fmt.Sprintf("First%d", i), fmt.Sprintf("Last%d%s", i, v),
		fmt.Sprintf("person%d@example.com", i), fmt.Sprintf("+1415%07d", i%10000000), "Company " + fmt.Sprint(i%97),
	}
}

// CSVHeader is the header of generated CSV sources.
var CSVHeader = []string{"id", "first_name", "last_name", "email", "phone", "company"}

// WriteCSV streams n generated rows to path; rows for which changed
// returns true get version "b".
func WriteCSV(path string, n int, changed func(i int) bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(CSVHeader)
	for i := 1; i <= n; i++ {
		v := ""
		if changed != nil && changed(i) {
			v = "b"
		}
		_ = w.Write(Row(i, v))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// RowsMapping is the mapping of generated rows, keyed by their id column.
func RowsMapping() configfile.Mapping {
	m := configfile.People()
	m.ExternalID = "id"
	return m
}

// config is the configuration of the benchmarks' one connector cc.
func (e *Env) config(cc configfile.Connector, webhooks configfile.Webhooks, logLevel string) configfile.File {
	cc.Mapping = RowsMapping()
	return configfile.File{
		Workspace:  configfile.Workspace{BaseURL: e.URL, APIKey: APIKey, RateLimit: e.Rate, Burst: e.Burst},
		State:      configfile.State{Path: filepath.Join(e.Dir, "syncd.db")},
		Webhooks:   webhooks,
		Log:        configfile.Log{Level: logLevel},
		Connectors: []configfile.Connector{cc},
	}
}

// WriteConfig writes a configuration for one CSV connector.
func (e *Env) WriteConfig(csvPath string) (string, error) {
	f := e.config(configfile.Connector{Name: "bench", Type: "csv", Workers: 8,
		Settings: map[string]any{"path": csvPath, "batchSize": 500}}, configfile.Webhooks{}, "warn")
	path := filepath.Join(e.Dir, "syncd.yaml")
	return path, f.Write(path)
}

// Result is one measured run of the daemon.
type Result struct {
	Wall        time.Duration
	CPU         time.Duration // user + system of the daemon process
	PeakRSS     int64         // bytes, of the daemon process (file-backed pages of the mmapped state file included)
	PeakAnon    int64         // bytes, peak anonymous memory (heap, stacks): RSS less file-backed pages
	Requests    map[string]int
	Throttled   int
	Output      string
	TotalCalls  int
	WriteCalls  int
	CreateCalls int
	PatchCalls  int
	DeleteCalls int
}

// RunOnce runs `syncd run --once --config cfg` and measures it.
func (e *Env) RunOnce(ctx context.Context, cfg string, extra ...string) (Result, error) {
	before := e.Emu.Stats()
	c, err := startChild(ctx, e.Binary, append([]string{"run", "--once", "--config", cfg}, extra...)...)
	if err != nil {
		return Result{}, err
	}
	res, err := c.wait()
	if err != nil {
		return res, err
	}
	e.countCalls(&res, before)
	return res, nil
}

// countCalls sets res's API call counts: the emulator's counters since
// before.
func (e *Env) countCalls(res *Result, before emulator.Stats) {
	after := e.Emu.Stats()
	res.Requests = map[string]int{}
	for k, v := range after.Requests {
		if d := v - before.Requests[k]; d > 0 {
			res.Requests[k] = d
			res.TotalCalls += d
		}
	}
	res.Throttled = after.Throttled - before.Throttled
	res.CreateCalls = res.Requests["POST /v1/contacts"]
	res.PatchCalls = res.Requests["PATCH /v1/contacts/{id}"]
	res.DeleteCalls = res.Requests["DELETE /v1/contacts/{id}"]
	res.WriteCalls = res.CreateCalls + res.PatchCalls + res.DeleteCalls
}

// Machine describes the machine a report was made on.
func Machine() string {
	host, _ := os.Hostname()
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores (%s), %s %s/%s", host, runtime.NumCPU(), model, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// sampleAnon polls the process's anonymous resident memory (RssAnon of
// /proc/PID/status) until stop is closed, and returns its peak. The
// state file is mapped into memory by bbolt, so the process's RSS also
// counts the file's pages it has read: reclaimable page cache, not
// memory the daemon holds.
func sampleAnon(pid int, stop <-chan struct{}) int64 {
	var peak int64
	path := fmt.Sprintf("/proc/%d/status", pid)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
					var kb int64
					fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
					peak = max(peak, kb*1024)
				}
			}
		}
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}
