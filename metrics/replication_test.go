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
		return []ReplicationLag{
			{Connector: "db", Slot: "syncd_db", Bytes: 12288, HasBytes: true},
			{Connector: "shop", Slot: "binlog", Bytes: 4096, HasBytes: true, Seconds: 2.5, HasSeconds: true},
			{Connector: "new", Slot: "binlog", Seconds: 0, HasSeconds: true},
		}
	})
	out := scrape(t, m)
	for _, want := range []string{
		`syncd_replication_lag_bytes{connector="db",slot="syncd_db"} 12288`,
		`syncd_replication_lag_bytes{connector="shop",slot="binlog"} 4096`,
		`syncd_replication_lag_seconds{connector="shop",slot="binlog"} 2.5`,
		`syncd_replication_lag_seconds{connector="new",slot="binlog"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, absent := range []string{`syncd_replication_lag_seconds{connector="db"`, `syncd_replication_lag_bytes{connector="new"`} {
		if strings.Contains(out, absent) {
			t.Errorf("scrape serves %q, which was not seen", absent)
		}
	}
}

func TestScrapeReplicationOrphans(t *testing.T) {
	m := New("test")
	if out := scrape(t, m); strings.Contains(out, "syncd_replication_orphans") {
		t.Fatal("orphans served before the daemon looked for any")
	}
	m.SetReplicationOrphans(func() []ReplicationOrphan { return nil })
	if out, want := scrape(t, m), "syncd_replication_orphans 0"; !strings.Contains(out, want) {
		t.Errorf("scrape lacks %q", want)
	}
	m.SetReplicationOrphans(func() []ReplicationOrphan {
		return []ReplicationOrphan{{Database: "db:5432/shop", Slot: "syncd_old", Publication: "syncd_old", Bytes: 4096}, {Database: "db:5432/shop", Publication: "syncd_gone"}}
	})
	out := scrape(t, m)
	for _, want := range []string{"syncd_replication_orphans 2", `syncd_replication_orphan_wal_bytes{database="db:5432/shop",slot="syncd_old"} 4096`} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, `slot=""`) {
		t.Error("a publication alone is served as a slot")
	}
}
