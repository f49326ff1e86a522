package daemon_test

import (
	"context"
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
	ctx, cancel := context.WithCancel(context.Background())
	r, err := e.d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.Wait() })
	waitUntil(t, 20*time.Second, "the first pass", func() bool { return len(e.names()) == 5 })
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
