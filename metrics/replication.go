package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ReplicationLag is how far a connector's change stream (a PostgreSQL
// replication slot, MariaDB's or MySQL's binlog) is behind its database
// server: the log written there but not yet applied and confirmed by
// syncd, in bytes, and, when the connector measures it, for how long.
type ReplicationLag struct {
	Connector, Slot string
	Bytes           int64
	HasBytes        bool // Bytes were seen (else only Seconds are served)
	Seconds         float64
	HasSeconds      bool
}

// SetReplicationLags makes syncd_replication_lag_bytes and
// syncd_replication_lag_seconds read fn at each scrape (nil removes
// them). fn must be cheap: connectors report what they last saw.
func (m *Metrics) SetReplicationLags(fn func() []ReplicationLag) {
	m.lags.mu.Lock()
	m.lags.read = fn
	m.lags.mu.Unlock()
}

// lagCollector exposes syncd_replication_lag_bytes{connector, slot} and
// syncd_replication_lag_seconds{connector, slot}.
type lagCollector struct {
	mu      sync.Mutex
	read    func() []ReplicationLag
	lag     *prometheus.Desc
	seconds *prometheus.Desc
}

func newLagCollector() *lagCollector {
	return &lagCollector{
		lag: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "replication_lag_bytes"),
			"Log the connector's change stream (logical replication slot, binlog) has not yet applied: written on the database server, not confirmed by syncd, as last seen.",
			[]string{"connector", "slot"}, nil),
		seconds: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "replication_lag_seconds"),
			"How late the connector's change stream is: about the age of the oldest change written on the database server and not yet applied (0 when caught up), as last seen.",
			[]string{"connector", "slot"}, nil),
	}
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.seconds
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	for _, l := range read() {
		if l.HasBytes {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(l.Bytes), l.Connector, l.Slot)
		}
		if l.HasSeconds {
			ch <- prometheus.MustNewConstMetric(c.seconds, prometheus.GaugeValue, l.Seconds, l.Connector, l.Slot)
		}
	}
}
