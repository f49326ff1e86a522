package daemon_test

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestMySQLBinlogLagSeconds: syncd_replication_lag_seconds says how long
// the binlog stream has been behind the server, beside the bytes: 0 when
// caught up, growing while a change waits on a slow workspace, 0 again
// once it is applied.
func TestMySQLBinlogLagSeconds(t *testing.T) {
	e := newBinlogEnv(t, 5)
	startForward(t, e.d, func() bool { return len(e.names()) == 5 })
	const seconds, bytes = `syncd_replication_lag_seconds{connector="shop",slot="binlog"} `, `syncd_replication_lag_bytes{connector="shop",slot="binlog"} `
	waitUntil(t, 20*time.Second, "lag 0 s and 0 bytes once caught up", func() bool {
		s, okS := metricValue(e.d, seconds)
		b, okB := metricValue(e.d, bytes)
		return okS && okB && s == 0 && b == 0
	})

	e.emu.SetLatency(3 * time.Second)
	mysqltest.Exec(t, e.db, `UPDATE contacts SET first_name = 'Slow' WHERE id = 1`)
	waitUntil(t, 30*time.Second, "a lag of a second or more while the change waits", func() bool {
		s, ok := metricValue(e.d, seconds)
		return ok && s >= 1
	})
	e.emu.SetLatency(0)
	waitUntil(t, 30*time.Second, "the change applied and the lag back to 0", func() bool {
		s, ok := metricValue(e.d, seconds)
		return ok && s == 0 && len(e.names()) == 5 && e.names()[4] == "Slow Last1"
	})
}

// metricValue reads the sample of d's metrics whose line starts with
// prefix.
func metricValue(d *daemon.Daemon, prefix string) (float64, bool) {
	rec := httptest.NewRecorder()
	d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestMySQLBinlogLagSecondsUnderSteadyEdits: under a steady stream of
// edits that syncd keeps up with, the lag in seconds stays about the
// time an edit takes to arrive: it does not grow with how long the
// stream of edits has lasted.
func TestMySQLBinlogLagSecondsUnderSteadyEdits(t *testing.T) {
	e := newBinlogEnv(t, 5)
	startForward(t, e.d, func() bool { return len(e.names()) == 5 })
	const seconds = `syncd_replication_lag_seconds{connector="shop",slot="binlog"} `
	const steady = 6 * time.Second
	var peak float64
	tick := time.NewTicker(40 * time.Millisecond)
	defer tick.Stop()
	for start, k := time.Now(), 0; time.Since(start) < steady; k++ {
		<-tick.C
		mysqltest.Exec(t, e.db, `UPDATE contacts SET first_name = ? WHERE id = ?`, fmt.Sprintf("Edit%d", k), 1+k%5)
		if s, ok := metricValue(e.d, seconds); ok {
			peak = max(peak, s)
		}
	}
	waitUntil(t, 20*time.Second, "the last edits in the workspace (the daemon kept up)", func() bool {
		n := 0
		for _, name := range e.names() {
			if strings.HasPrefix(name, "Edit") {
				n++
			}
		}
		return n == 5
	})
	t.Logf("peak lag over %v of edits every 40 ms: %.2f s", steady, peak)
	if peak >= steady.Seconds()/2 {
		t.Errorf("the lag reached %.2f s during %v of steady edits the daemon kept up with: it counts how long edits have been coming, not how late they are", peak, steady)
	}
}
