package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// A CSV export replaced while the daemon runs is read at once (once it
// has settled), not at the next tick of its hourly schedule.
func TestCSVReplacedStartsAPass(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	o := e2e.CSVOptions{EmulatorURL: emu.URL, APIKey: emulator.DefaultAPIKey, Rows: 20, Company: "Before"}
	cfg, err := config.Load(e2e.WriteCSVConfig(t, dir, o), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	r, err := d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.Wait() })

	companies := func(want string) bool {
		cs := emu.Contacts()
		if len(cs) != o.Rows {
			return false
		}
		for _, c := range cs {
			if c.DefaultFields.Company == nil || *c.DefaultFields.Company != want {
				return false
			}
		}
		return true
	}
	waitUntil(t, 10*time.Second, "the first pass", func() bool { return companies("Before") })
	if st, err := d.Status(context.Background()); err != nil || st.Connectors[0].Mode != "file watch + poll every 1h" {
		t.Errorf("status mode %q (%v), want %q", st.Connectors[0].Mode, err, "file watch + poll every 1h")
	}

	o.Company = "After"
	changed := time.Now()
	e2e.WriteCSVConfig(t, dir, o) // rewrites contacts.csv
	waitUntil(t, 10*time.Second, "the pass the new file starts", func() bool { return companies("After") })
	took := time.Since(changed)
	t.Logf("file replaced -> every contact updated in %v (settle %v)", took, 2*time.Second)
	if took > 30*time.Second {
		t.Errorf("the new file reached the workspace after %v; want it read once settled (2 s), not at the schedule", took)
	}
}

func waitUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
