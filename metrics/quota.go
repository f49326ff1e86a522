package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syncd-io/syncd/connector"
)

// ConnectorQuota is one API allowance of a connector's system, as the
// connector last read it.
type ConnectorQuota struct {
	Connector string
	connector.Quota
}

// SetQuotas makes the quota gauges read fn at each scrape (nil removes
// them). fn must be cheap: connectors report what they last saw.
func (m *Metrics) SetQuotas(fn func() []ConnectorQuota) {
	m.quotas.mu.Lock()
	m.quotas.read = fn
	m.quotas.mu.Unlock()
}

// quotaCollector exposes the connectors' API allowances:
// syncd_api_quota_used, syncd_api_quota_limit and, where syncd keeps a
// budget below the limit, syncd_api_quota_budget_ratio.
type quotaCollector struct {
	mu                  sync.Mutex
	read                func() []ConnectorQuota
	used, limit, budget *prometheus.Desc
}

func newQuotaCollector() *quotaCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "", n) }
	labels := []string{"connector", "quota"}
	return &quotaCollector{
		used:   prometheus.NewDesc(name("api_quota_used"), "Spent of a remote API's allowance in its current window, as its last answer said, by connector and quota.", labels, nil),
		limit:  prometheus.NewDesc(name("api_quota_limit"), "A remote API's allowance for its window, by connector and quota.", labels, nil),
		budget: prometheus.NewDesc(name("api_quota_budget_ratio"), "Share of the allowance syncd may spend before it stops a pass until the next schedule.", labels, nil),
	}
}

func (c *quotaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.used
	ch <- c.limit
	ch <- c.budget
}

func (c *quotaCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	for _, q := range read() {
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(q.Used), q.Connector, q.Name)
		if q.Limit > 0 {
			ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(q.Limit), q.Connector, q.Name)
		}
		if q.Budget > 0 {
			ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, q.Budget, q.Connector, q.Name)
		}
	}
}
