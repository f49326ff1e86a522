package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPGLogicalHealthPage: while the daemon streams a table, its status
// and the health page show the connector's mode with its slot and how
// much WAL the slot holds ("logical, slot syncd_..., 12 kB behind + poll
// every 1h"), as an operator watching replication lag needs.
func TestPGLogicalHealthPage(t *testing.T) {
	e := newLogicalEnv(t, 5)
	startForward(t, e.d, func() bool { return len(e.names()) == 5 })

	// An insert moves the WAL; the change watcher sees the slot behind.
	e.exec(`INSERT INTO ` + e.table + ` (id, first_name, last_name) VALUES (100, 'Lag', 'Seen')`)
	var mode string
	waitUntil(t, 20*time.Second, "a mode with the slot's lag", func() bool {
		st, err := e.d.Status(context.Background())
		if err != nil || len(st.Connectors) != 1 {
			return false
		}
		mode = st.Connectors[0].Mode
		return strings.Contains(mode, " behind + ")
	})
	const slotPrefix = "logical, slot syncd_testpglogicalhealthpage_"
	if !strings.HasPrefix(mode, slotPrefix) || !strings.HasSuffix(mode, " behind + poll every 1h") {
		t.Fatalf("status mode %q, want %q... and the lag, then \" behind + poll every 1h\"", mode, slotPrefix)
	}

	page := healthPage(t, e.d)
	// The lag may have changed since: the page shows the slot and a lag.
	i := strings.Index(page, `<span class="mode">`+slotPrefix)
	if i < 0 {
		t.Fatalf("the health page does not show the connector's logical mode and slot; it holds:\n%s", page)
	}
	shown := page[i:]
	shown = shown[:strings.Index(shown, "</span>")+len("</span>")]
	if !strings.Contains(shown, " behind + poll every 1h</span>") {
		t.Errorf("the health page shows the mode as %q, want the slot's lag (\"... kB behind + poll every 1h\")", shown)
	}
}
