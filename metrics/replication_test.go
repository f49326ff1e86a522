package metrics

import (
	"strings"
	"testing"
)

func TestScrapeReplicationLag(t *testing.T) {
	m := New("test")
	if out := scrape(t, m); strings.Contains(out, "syncd_replication_lag_bytes{") {
		t.Fatal("replication lag served before any connector reports one")
	}
	m.SetReplicationLags(func() []ReplicationLag {
		return []ReplicationLag{{Connector: "db", Slot: "syncd_db", Bytes: 12288}}
	})
	if out, want := scrape(t, m), `syncd_replication_lag_bytes{connector="db",slot="syncd_db"} 12288`; !strings.Contains(out, want) {
		t.Errorf("scrape lacks %q", want)
	}
}
