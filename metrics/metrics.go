// Package metrics is syncd's Prometheus instrumentation, served by the
// admin server at /metrics through the official client library
// (github.com/prometheus/client_golang) on a registry of its own, so that
// two daemons in one process (tests) never share counters.
//
// Counters are updated as things happen: every HTTP attempt against the
// workspace API (ObserveRequest, fed by the client's Observer), every
// finished pass of a connector (ObserveRun). Gauges that describe state
// (links, dead letters, conflicts, the webhook inbox) and the webhook
// receiver's counters are read when Prometheus scrapes, through the
// functions given to SetStateGauges and SetWebhookStats, so that they are
// right after a restart and cost nothing between scrapes.
//
// Metric names (all prefixed syncd_) and labels are a stable interface:
// alerts are written against them (see the README).
package metrics

import (
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace"
)

const namespace = "syncd"

// Metrics holds syncd's collectors and their registry.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	limiterWait     prometheus.Counter
	records         *prometheus.CounterVec
	runs            *prometheus.CounterVec
	runDuration     *prometheus.HistogramVec
	lastSuccess     *prometheus.GaugeVec
	lastRun         *prometheus.GaugeVec
	forwardLatency  *prometheus.HistogramVec // latency.go

	scrape *scrapeCollector
	quotas *quotaCollector
	lags   *lagCollector
	// orphans are orphaned replication slots (orphans.go).
	orphans *orphanCollector
}

// New returns syncd's metrics on a fresh registry, with the Go runtime
// and process collectors and syncd_build_info{version} set.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "workspace_requests_total",
			Help: "HTTP attempts against the workspace API (retries included), by route template and status (\"error\" when no answer came).",
		}, []string{"route", "status"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "workspace_request_duration_seconds",
			Help:    "Time from sending a workspace API request to reading its answer, by route template.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		limiterWait: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "workspace_rate_limiter_wait_seconds_total",
			Help: "Time requests spent waiting on the API key's rate limiter (and on the shared pause after a 429) before being sent.",
		}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "records_total",
			Help: "Records handled by finished passes, by connector and outcome (created, updated, unchanged, deleted, unlinked, relinked, failed, ...).",
		}, []string{"connector", "outcome"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "runs_total",
			Help: "Finished passes, by connector, kind (run, resync, retry) and result (ok; error; budget: stopped at the connector's API budget).",
		}, []string{"connector", "kind", "result"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "run_duration_seconds",
			Help:    "Duration of finished passes, by connector and kind.",
			Buckets: []float64{.1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200},
		}, []string{"connector", "kind"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "last_success_timestamp_seconds",
			Help: "Unix time at which the connector's last pass that ended without error finished (from the run history at start-up).",
		}, []string{"connector"}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "last_run_timestamp_seconds",
			Help: "Unix time at which the connector's last pass finished, with or without error.",
		}, []string{"connector"}),
		scrape: newScrapeCollector(),
		quotas: newQuotaCollector(),
		lags:   newLagCollector(),

		orphans: newOrphanCollector(),
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "Always 1; its labels name the running build.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	buildInfo.Set(1)
	m.forwardLatency = newForwardLatency()
	m.reg.MustRegister(m.forwardLatency)
	m.reg.MustRegister(
		m.requests, m.requestDuration, m.limiterWait, m.records, m.runs, m.runDuration, m.lastSuccess, m.lastRun,
		m.scrape, m.quotas, m.lags, m.orphans, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry the metrics are registered on.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveRequest counts one HTTP attempt of the workspace client; use it
// as (or from) workspace.ClientOptions.Observer.
func (m *Metrics) ObserveRequest(info workspace.RequestInfo) {
	status := "error"
	if info.Status > 0 {
		status = strconv.Itoa(info.Status)
	}
	m.requests.WithLabelValues(info.Route, status).Inc()
	if info.Status > 0 {
		m.requestDuration.WithLabelValues(info.Route).Observe(info.Duration.Seconds())
	}
	m.limiterWait.Add(info.LimiterWait.Seconds())
}

// ObserveRun counts a finished pass: its records by outcome (every count
// the summary reports), its duration, and its result; a pass without
// error also moves the connector's last-success time to finished.
func (m *Metrics) ObserveRun(sum reconcile.Summary, err error, finished time.Time) {
	kind := sum.Kind
	if kind == "" {
		kind = "run"
	}
	for outcome, v := range sum.Fields() {
		// The summary's counts are its int fields; api_calls (int64) and
		// duration (a string) are measured elsewhere.
		if n, ok := v.(int); ok && n > 0 {
			m.records.WithLabelValues(sum.Connector, outcome).Add(float64(n))
		}
	}
	result := "ok"
	switch {
	case errors.Is(err, connector.ErrBudgetSpent):
		result = "budget"
	case err != nil:
		result = "error"
	}
	m.runs.WithLabelValues(sum.Connector, kind, result).Inc()
	m.runDuration.WithLabelValues(sum.Connector, kind).Observe(sum.Duration.Seconds())
	m.lastRun.WithLabelValues(sum.Connector).Set(unix(finished))
	if err == nil {
		m.lastSuccess.WithLabelValues(sum.Connector).Set(unix(finished))
	}
}

// SetLastSuccess sets the connector's last-success time (at start-up,
// from the run history); a zero time leaves it unset.
func (m *Metrics) SetLastSuccess(connector string, t time.Time) {
	if !t.IsZero() {
		m.lastSuccess.WithLabelValues(connector).Set(unix(t))
	}
}

// SetLastRun sets the connector's last-run time (at start-up).
func (m *Metrics) SetLastRun(connector string, t time.Time) {
	if !t.IsZero() {
		m.lastRun.WithLabelValues(connector).Set(unix(t))
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// WebhookStats are the webhook receiver's and the reverse applier's
// counters since the process started.
type WebhookStats struct {
	// Deliveries answered by the receiver: written to the inbox,
	// acknowledged as seen before, acknowledged and dropped (a type syncd
	// does not handle), refused (bad signature, malformed: 4xx), failed
	// (syncd could not store them: 5xx).
	Accepted, Duplicates, Ignored, Refused, Failed int64
	// RefusedBy counts the refusals by reason (a short fixed set of
	// labels, such as no_contact for a contact event carrying its contact
	// in neither data.object nor data.resource).
	RefusedBy map[string]int64
	// Echoes are accepted events the applier dropped as syncd's own
	// writes coming back (or changes of fields that do not flow back).
	Echoes int64
	// PutOffs are write-backs the applier put off because the record
	// changed since it was read; PutOffDeadLetters the contacts it set
	// aside as dead letters after too many put-offs.
	PutOffs, PutOffDeadLetters int64
}

// SetWebhookStats makes the webhook counters read fn at each scrape (nil
// removes them). The daemon calls it once the receiver runs.
func (m *Metrics) SetWebhookStats(fn func() WebhookStats) {
	m.scrape.mu.Lock()
	m.scrape.webhook = fn
	m.scrape.mu.Unlock()
}

// ConnectorGauges are one connector's figures read from state.
type ConnectorGauges struct {
	Connector string
	// Links are the records in sync (linked to a contact).
	Links int
	// DeadLetters are the records set aside, waiting for a retry or an
	// operator.
	DeadLetters int
	// Conflicts are the entries of the conflict journal.
	Conflicts int
	// FieldWarnings are the record values left out of their contacts (a
	// phone number that is not one), the records synced without them.
	FieldWarnings int
	// MassDeleteRefused is true while a mass delete the guard refused
	// stands, not yet acted on.
	MassDeleteRefused bool
	// Activities, when the connector logs calls and texts: created,
	// skipped (no record has the number) and refused activities.
	Activities *ActivityGauges
}

// ActivityGauges are a connector's activity figures.
type ActivityGauges struct {
	Logged, Updated, Skipped, Failed int64
}

// StateGauges are the figures read from state at each scrape.
type StateGauges struct {
	Connectors []ConnectorGauges
	// InboxPending is the number of webhook events not yet applied.
	InboxPending int
	// ActivitiesPending is the number of call and message events not
	// handled yet; -1 when no connector logs activities.
	ActivitiesPending int
}

// SetStateGauges makes the state gauges read fn at each scrape (results
// are reused for a few seconds, so that several scrapers cost one read).
// An error of fn is counted in syncd_state_read_errors_total and leaves
// the gauges out of that scrape.
func (m *Metrics) SetStateGauges(fn func() (StateGauges, error)) {
	m.scrape.mu.Lock()
	m.scrape.state, m.scrape.cachedAt = fn, time.Time{}
	m.scrape.mu.Unlock()
}

// stateCacheFor is how long state gauges are reused between scrapes.
const stateCacheFor = 5 * time.Second

// scrapeCollector reads state gauges and webhook counters when scraped.
type scrapeCollector struct {
	mu       sync.Mutex
	webhook  func() WebhookStats
	state    func() (StateGauges, error)
	cached   StateGauges
	cachedAt time.Time
	errors   prometheus.Counter

	links, deadLetters, conflicts, inbox *prometheus.Desc
	fieldWarnings, massDeleteRefused     *prometheus.Desc
	deliveries, echoes, refused          *prometheus.Desc
	putOffs, putOffDeadLetters           *prometheus.Desc
	activities, activitiesPending        *prometheus.Desc
}

func newScrapeCollector() *scrapeCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "", n) }
	return &scrapeCollector{
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "state_read_errors_total",
			Help: "Scrapes whose read of the state gauges failed.",
		}),
		links:       prometheus.NewDesc(name("links"), "Records in sync: links between the connector's records and workspace contacts.", []string{"connector"}, nil),
		deadLetters: prometheus.NewDesc(name("dead_letters"), "Dead letters outstanding: records set aside after failing, by connector.", []string{"connector"}, nil),
		fieldWarnings: prometheus.NewDesc(name("field_warnings"),
			"Record values left out of their contacts (a phone number that is not one); the records synced without them. By connector.", []string{"connector"}, nil),
		massDeleteRefused: prometheus.NewDesc(name("mass_delete_refused"),
			"1 while a mass delete the guard refused stands, not acted on (syncd status says how), by connector.", []string{"connector"}, nil),
		conflicts:  prometheus.NewDesc(name("conflicts"), "Conflicts in the journal (both sides changed a contact; settled by policy), by connector.", []string{"connector"}, nil),
		inbox:      prometheus.NewDesc(name("webhook_inbox_pending"), "Webhook events accepted but not yet applied.", nil, nil),
		deliveries: prometheus.NewDesc(name("webhook_deliveries_total"), "Webhook deliveries answered by the receiver, by result (accepted, duplicate, ignored, refused, failed).", []string{"result"}, nil),
		echoes:     prometheus.NewDesc(name("webhook_echoes_total"), "Accepted webhook events dropped as echoes of syncd's own writes.", nil, nil),
		putOffs: prometheus.NewDesc(name("writeback_put_offs_total"),
			"Write-backs put off because the record changed between its read and the write (decided anew the next round).", nil, nil),
		putOffDeadLetters: prometheus.NewDesc(name("writeback_put_off_dead_letters_total"),
			"Contacts whose write-back was put off too many times in a row and was set aside as a dead letter.", nil, nil),
		activities: prometheus.NewDesc(name("activities"),
			"Calls and texts of the workspace by what became of them on the connector's records (logged: created; updated: later writes such as a summary; skipped: no record has the number; failed: refused, a dead letter), since the state file was made.",
			[]string{"connector", "result"}, nil),
		activitiesPending: prometheus.NewDesc(name("activities_pending"), "Call and message events accepted but not yet logged on the records.", nil, nil),
		refused:           prometheus.NewDesc(name("webhook_refused_total"), "Webhook deliveries refused (4xx), by reason (no_contact: a contact event whose contact is in neither data.object nor data.resource).", []string{"reason"}, nil),
	}
}

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	c.errors.Describe(ch)
	for _, d := range []*prometheus.Desc{c.links, c.deadLetters, c.fieldWarnings, c.massDeleteRefused, c.conflicts, c.inbox, c.deliveries, c.echoes, c.refused, c.putOffs, c.putOffDeadLetters, c.activities, c.activitiesPending} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	webhook, gauges, ok := c.webhook, c.cached, !c.cachedAt.IsZero()
	if c.state != nil && time.Since(c.cachedAt) >= stateCacheFor {
		g, err := c.state()
		if err != nil {
			c.errors.Inc()
			ok = false
		} else {
			c.cached, c.cachedAt, gauges, ok = g, time.Now(), g, true
		}
	}
	c.mu.Unlock()
	c.errors.Collect(ch)
	if ok {
		for _, g := range gauges.Connectors {
			ch <- prometheus.MustNewConstMetric(c.links, prometheus.GaugeValue, float64(g.Links), g.Connector)
			ch <- prometheus.MustNewConstMetric(c.deadLetters, prometheus.GaugeValue, float64(g.DeadLetters), g.Connector)
			ch <- prometheus.MustNewConstMetric(c.conflicts, prometheus.GaugeValue, float64(g.Conflicts), g.Connector)
			ch <- prometheus.MustNewConstMetric(c.fieldWarnings, prometheus.GaugeValue, float64(g.FieldWarnings), g.Connector)
			refused := 0.0
			if g.MassDeleteRefused {
				refused = 1
			}
			ch <- prometheus.MustNewConstMetric(c.massDeleteRefused, prometheus.GaugeValue, refused, g.Connector)
			if a := g.Activities; a != nil {
				for result, n := range map[string]int64{"logged": a.Logged, "updated": a.Updated, "skipped": a.Skipped, "failed": a.Failed} {
					ch <- prometheus.MustNewConstMetric(c.activities, prometheus.GaugeValue, float64(n), g.Connector, result)
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(c.inbox, prometheus.GaugeValue, float64(gauges.InboxPending))
		if gauges.ActivitiesPending >= 0 {
			ch <- prometheus.MustNewConstMetric(c.activitiesPending, prometheus.GaugeValue, float64(gauges.ActivitiesPending))
		}
	}
	if webhook != nil {
		s := webhook()
		for result, n := range map[string]int64{
			"accepted": s.Accepted, "duplicate": s.Duplicates, "ignored": s.Ignored, "refused": s.Refused, "failed": s.Failed,
		} {
			ch <- prometheus.MustNewConstMetric(c.deliveries, prometheus.CounterValue, float64(n), result)
		}
		ch <- prometheus.MustNewConstMetric(c.echoes, prometheus.CounterValue, float64(s.Echoes))
		ch <- prometheus.MustNewConstMetric(c.putOffs, prometheus.CounterValue, float64(s.PutOffs))
		ch <- prometheus.MustNewConstMetric(c.putOffDeadLetters, prometheus.CounterValue, float64(s.PutOffDeadLetters))
		for reason, n := range s.RefusedBy {
			ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(n), reason)
		}
	}
}
