package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ReplicationLag is the WAL a connector's replication slot holds on its
// database server: written there but not yet confirmed by syncd.
type ReplicationLag struct {
	Connector, Slot string
	Bytes           int64
}

// SetReplicationLags makes syncd_replication_lag_bytes read fn at each
// scrape (nil removes it). fn must be cheap: connectors report what they
// last saw.
func (m *Metrics) SetReplicationLags(fn func() []ReplicationLag) {
	m.lags.mu.Lock()
	m.lags.read = fn
	m.lags.mu.Unlock()
}

// lagCollector exposes syncd_replication_lag_bytes{connector, slot}.
type lagCollector struct {
	mu   sync.Mutex
	read func() []ReplicationLag
	lag  *prometheus.Desc
}

func newLagCollector() *lagCollector {
	return &lagCollector{lag: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "replication_lag_bytes"),
		"WAL the connector's logical replication slot holds on the database server (written, not yet confirmed by syncd), as last seen.",
		[]string{"connector", "slot"}, nil)}
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.lag }

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	for _, l := range read() {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(l.Bytes), l.Connector, l.Slot)
	}
}
