package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// forwardLatencyBuckets span a webhook's second to a daily schedule.
var forwardLatencyBuckets = []float64{.1, .25, .5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600}

func newForwardLatency() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "forward_latency_seconds",
		Help:    "Time from a record's change at its source (its UpdatedAt) to its contact written in the workspace, by connector; records without a change time (CSV) are not counted.",
		Buckets: forwardLatencyBuckets,
	}, []string{"connector"})
}

// ObserveForwardLatency records that a change of connector's record made
// d ago is now in its contact. A negative d (clocks apart) counts as 0.
func (m *Metrics) ObserveForwardLatency(connector string, d time.Duration) {
	m.forwardLatency.WithLabelValues(connector).Observe(max(d, 0).Seconds())
}
