package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ReplicationOrphan is a PostgreSQL replication slot (or publication) of
// syncd's that no configured connector uses, with the WAL it holds.
type ReplicationOrphan struct {
	Database, Slot, Publication string
	Bytes                       int64
}

// SetReplicationOrphans makes syncd_replication_orphans and
// syncd_replication_orphan_wal_bytes read fn at each scrape (nil removes
// them). fn must be cheap: it returns what the last look found.
func (m *Metrics) SetReplicationOrphans(fn func() []ReplicationOrphan) {
	m.orphans.mu.Lock()
	m.orphans.read = fn
	m.orphans.mu.Unlock()
}

// orphanCollector exposes syncd_replication_orphans (a count, 0 when
// none: alert on > 0) and syncd_replication_orphan_wal_bytes{database,
// slot}.
type orphanCollector struct {
	mu          sync.Mutex
	read        func() []ReplicationOrphan
	count, held *prometheus.Desc
}

func newOrphanCollector() *orphanCollector {
	return &orphanCollector{
		count: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "replication_orphans"),
			"Replication slots and publications of syncd's, on the databases of the configured postgres connectors, that no configured connector uses (a removed or renamed connector's), as last looked at: drop them with syncd replication drop --slot NAME.",
			nil, nil),
		held: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "replication_orphan_wal_bytes"),
			"WAL an orphaned replication slot of syncd's keeps on the database server (from its restart position), as last looked at.",
			[]string{"database", "slot"}, nil),
	}
}

func (c *orphanCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.count
	ch <- c.held
}

func (c *orphanCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	found := read()
	ch <- prometheus.MustNewConstMetric(c.count, prometheus.GaugeValue, float64(len(found)))
	for _, o := range found {
		if o.Slot != "" {
			ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(o.Bytes), o.Database, o.Slot)
		}
	}
}
