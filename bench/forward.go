package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	_ "github.com/syncd-io/syncd/connector/csv" // the sources of these scenarios
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// Figure is one line of the report.
type Figure struct {
	Scenario string
	Metric   string
	Value    string
	Target   string
	OK       bool
}

func fig(scn, metric, value, target string, ok bool) Figure {
	return Figure{Scenario: scn, Metric: metric, Value: value, Target: target, OK: ok}
}

// Forward measures an initial sync of n new rows at the given rate, a
// rerun with nothing changed and one with 1% of the rows changed.
func Forward(ctx context.Context, binary, dir string, n int, rate float64, maxRatio float64) ([]Figure, error) {
	env, src, cfg, err := csvEnv(binary, dir, rate, 10, n)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	scn := fmt.Sprintf("initial sync, %d rows at %g/s", n, rate)
	r, err := env.RunOnce(ctx, cfg)
	if err != nil {
		return nil, err
	}
	minCalls := n + 1 // one create per row, one listing page of the empty source
	ideal := time.Duration(float64(minCalls) / rate * float64(time.Second))
	ratio := r.Wall.Seconds() / ideal.Seconds()
	var figs []Figure
	figs = append(figs,
		fig(scn, "wall time / ideal (calls needed / rate)", fmt.Sprintf("%.3f (%.1fs / %.1fs)", ratio, r.Wall.Seconds(), ideal.Seconds()), fmt.Sprintf("<= %.2f", maxRatio), ratio <= maxRatio),
		fig(scn, "API calls / minimum", fmt.Sprintf("%d / %d", r.TotalCalls, minCalls), fmt.Sprintf("<= %d", minCalls+25), r.TotalCalls <= minCalls+25),
		fig(scn, "contacts in the workspace (POSTs sent, of them throttled)", fmt.Sprintf("%d (%d, %d)", len(env.Emu.Contacts()), r.CreateCalls, r.Throttled), fmt.Sprint(n), len(env.Emu.Contacts()) == n),
		fig(scn, "429s received (the limiter matches the service's bucket)", fmt.Sprint(r.Throttled), "0", r.Throttled == 0),
		fig(scn, "CPU seconds of the daemon", fmt.Sprintf("%.2f", r.CPU.Seconds()), "", true),
		fig(scn, "peak anonymous memory (heap, stacks) of the daemon", MiB(r.PeakAnon), "", true),
		fig(scn, "peak RSS of the daemon", MiB(r.PeakRSS), "", true),
	)

	scn = fmt.Sprintf("rerun, %d rows, nothing changed", n)
	if r, err = env.RunOnce(ctx, cfg); err != nil {
		return nil, err
	}
	figs = append(figs,
		fig(scn, "write calls (POST+PATCH+DELETE)", fmt.Sprint(r.WriteCalls), "0", r.WriteCalls == 0),
		fig(scn, "API calls besides the start-up credential check", fmt.Sprint(r.TotalCalls-r.Requests[workspace.RouteOrganization]), "0", r.TotalCalls-r.Requests[workspace.RouteOrganization] == 0),
		fig(scn, "wall time", fmt.Sprintf("%.2fs", r.Wall.Seconds()), "", true),
	)

	changed := n / 100
	if err := WriteCSV(src, n, func(i int) bool { return i%100 == 0 }); err != nil {
		return nil, err
	}
	scn = fmt.Sprintf("rerun, %d rows, 1%% (%d) changed", n, changed)
	if r, err = env.RunOnce(ctx, cfg); err != nil {
		return nil, err
	}
	figs = append(figs,
		fig(scn, "PATCH calls (of them answered 429 and sent again)", fmt.Sprintf("%d (%d)", r.PatchCalls, r.Throttled), fmt.Sprintf("%d (0)", changed), r.PatchCalls == changed && r.Throttled == 0),
		fig(scn, "POST+DELETE calls", fmt.Sprint(r.CreateCalls+r.DeleteCalls), "0", r.CreateCalls+r.DeleteCalls == 0),
		fig(scn, "wall time", fmt.Sprintf("%.2fs", r.Wall.Seconds()), "", true),
	)
	return figs, nil
}

// Targets of the scan: a pass over unchanged rows costs no mapping (their
// raw fingerprints match their links'), and memory grows by a few bytes a
// row (the repeated-ID check and the set of rows seen).
const (
	scanMaxSecondsPerMillion = 4.0
	scanMaxAnon              = 48 << 20
	scanMaxGrowthPerRow      = 16
	stateMaxBytesPerLink     = 400
)

// Scan measures a pass over an n-row CSV source whose every row is
// already linked and unchanged: no API call, and memory that must not
// grow with the source held whole (it is streamed; links are read from
// bbolt). A pass over n/10 rows first shows how memory grows with n. The
// state file of the n links is measured too.
func Scan(ctx context.Context, binary, dir string, n int) ([]Figure, error) {
	small, _, _, err := scanOnce(ctx, binary, filepath.Join(dir, "small"), n/10)
	if err != nil {
		return nil, err
	}
	r, seeded, stateSize, err := scanOnce(ctx, binary, filepath.Join(dir, "full"), n)
	if err != nil {
		return nil, err
	}
	scn := fmt.Sprintf("pass over %d unchanged rows", n)
	perRow := float64(r.PeakAnon-small.PeakAnon) / float64(n-n/10)
	maxSecs := scanMaxSecondsPerMillion * float64(n) / 1e6
	perLink := float64(stateSize) / float64(n)
	return []Figure{
		fig(scn, "wall time", fmt.Sprintf("%.1fs (%.0f rows/s)", r.Wall.Seconds(), float64(n)/r.Wall.Seconds()), fmt.Sprintf("<= %.1fs", maxSecs), r.Wall.Seconds() <= maxSecs),
		fig(scn, "CPU seconds of the daemon", fmt.Sprintf("%.2f", r.CPU.Seconds()), fmt.Sprintf("<= %.1f", maxSecs), r.CPU.Seconds() <= maxSecs),
		fig(scn, "peak anonymous memory (heap, stacks) of the daemon", MiB(r.PeakAnon), "<= "+MiB(scanMaxAnon), r.PeakAnon <= scanMaxAnon),
		fig(scn, fmt.Sprintf("peak anonymous memory of a pass over %d rows", n/10), MiB(small.PeakAnon), "", true),
		fig(scn, "memory growth per row between the two passes", fmt.Sprintf("%.0f bytes", perRow), fmt.Sprintf("<= %d bytes", scanMaxGrowthPerRow), perRow <= scanMaxGrowthPerRow),
		fig(scn, "peak RSS of the daemon (includes the mmapped state file's pages)", MiB(r.PeakRSS), "", true),
		fig(scn, "API calls besides the start-up credential check", fmt.Sprint(r.TotalCalls-r.Requests[workspace.RouteOrganization]), "0", r.TotalCalls-r.Requests[workspace.RouteOrganization] == 0),
		fig(scn, fmt.Sprintf("state file per link, %d links (seeded 500 a transaction, then the pass)", n), fmt.Sprintf("%.0f bytes (%s)", perLink, MiB(stateSize)), fmt.Sprintf("<= %d bytes", stateMaxBytesPerLink), perLink <= stateMaxBytesPerLink),
		fig(scn, "(setup: links seeded straight into state)", fmt.Sprintf("%.1fs", seeded.Seconds()), "", true),
	}, nil
}

// StateSize measures the state file after an initial sync of n rows by
// the daemon (one transaction per created contact, as in production),
// against an emulator fast enough that the sync takes seconds.
func StateSize(ctx context.Context, binary, dir string, n int) ([]Figure, error) {
	env, _, cfg, err := csvEnv(binary, dir, 5000, 100, n)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	if _, err := env.RunOnce(ctx, cfg); err != nil {
		return nil, err
	}
	if got := len(env.Emu.Contacts()); got != n {
		return nil, fmt.Errorf("initial sync made %d contacts, want %d", got, n)
	}
	st, err := os.Stat(filepath.Join(dir, "syncd.db"))
	if err != nil {
		return nil, err
	}
	perLink := float64(st.Size()) / float64(n)
	scn := fmt.Sprintf("state file after an initial sync of %d rows", n)
	return []Figure{
		fig(scn, "bytes per link (file size / links)", fmt.Sprintf("%.0f bytes (%s)", perLink, MiB(st.Size())), fmt.Sprintf("<= %d bytes", stateMaxBytesPerLink), perLink <= stateMaxBytesPerLink),
	}, nil
}

// scanOnce seeds n linked rows in dir and measures one pass over them;
// it returns the state file's size after the pass too.
func scanOnce(ctx context.Context, binary, dir string, n int) (Result, time.Duration, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, 0, 0, err
	}
	env, _, cfgPath, err := csvEnv(binary, dir, 100, 10, n)
	if err != nil {
		return Result{}, 0, 0, err
	}
	defer env.Close()
	seedStart := time.Now()
	if err := seedLinks(ctx, cfgPath); err != nil {
		return Result{}, 0, 0, fmt.Errorf("seed links: %w", err)
	}
	seeded := time.Since(seedStart)
	r, err := env.RunOnce(ctx, cfgPath)
	if err != nil {
		return r, seeded, 0, err
	}
	st, err := os.Stat(filepath.Join(dir, "syncd.db"))
	if err != nil {
		return r, seeded, 0, err
	}
	return r, seeded, st.Size(), nil
}

// seedLinks links every row of the configured CSV connector as if an
// earlier run had written it, straight into the state file.
func seedLinks(ctx context.Context, cfgPath string) error {
	cfg, err := config.Load(cfgPath, func(string) string { return "" })
	if err != nil {
		return err
	}
	cc := cfg.Connectors[0]
	m, err := mapping.Compile(cc.Mapping, cc.Direction, nil)
	if err != nil {
		return err
	}
	typ, _ := connector.Lookup(cc.Type)
	src, err := typ.Open(ctx, connector.Options{Name: cc.Name, Settings: cc.Settings})
	if err != nil {
		return err
	}
	defer src.Close()
	store, err := state.Open(cfg.State.Path, state.Options{NoSync: true})
	if err != nil {
		return err
	}
	defer store.Close()
	return src.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		links := make([]state.Link, 0, len(b.Records))
		for _, rec := range b.Records {
			mapped, err := m.ToContact(rec)
			if err != nil {
				return err
			}
			f := reconcile.ContactFields(mapped)
			h := f.Hash()
			links = append(links, state.Link{
				Connector: cc.Name, ExternalID: mapped.ExternalID, ContactID: "c" + rec.ID, RecordID: rec.ID,
				Fields: f, WorkspaceHash: h, SourceHash: h,
				// As the pass that wrote the link records it (this binary).
				Fingerprint: m.Fingerprint(rec, h),
			})
		}
		return store.Links.PutAll(links)
	})
}

// csvEnv starts an emulator at rate and burst, writes a CSV source of n
// generated rows in dir and the configuration of one connector reading
// it; it returns the environment, the CSV's path and the configuration's.
func csvEnv(binary, dir string, rate float64, burst, n int) (*Env, string, string, error) {
	env, err := NewEnv(binary, dir, rate, burst)
	if err != nil {
		return nil, "", "", err
	}
	src := filepath.Join(dir, "contacts.csv")
	if err := WriteCSV(src, n, nil); err != nil {
		env.Close()
		return nil, "", "", err
	}
	cfg, err := env.WriteConfig(src)
	if err != nil {
		env.Close()
		return nil, "", "", err
	}
	return env, src, cfg, nil
}
