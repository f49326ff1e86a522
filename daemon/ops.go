package daemon

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncd-io/syncd/metrics"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// ops is what the daemon keeps for its operators: its metrics, when the
// workspace last answered, the readiness checks others add, and the
// webhook receiver's address.
type ops struct {
	metrics   *metrics.Metrics
	version   string
	startedAt time.Time

	// lastReachable is when the workspace last answered a request in a
	// way that shows it reachable with a valid key (Unix nanoseconds).
	lastReachable atomic.Int64

	mu       sync.Mutex
	checks   []readyCheck
	receiver string

	probeMu sync.Mutex // serialises the workspace probes of readiness
	probe   probeResult

	history *history // the health page's charts, see history.go

	orphans orphanWatch // orphaned replication slots, see orphans.go
}

type readyCheck struct {
	name string
	fn   func(context.Context) error
}

type probeResult struct {
	at  time.Time
	err error
}

func newOps(version string) *ops {
	if version == "" {
		version = "dev"
	}
	return &ops{metrics: metrics.New(version), version: version, startedAt: time.Now()}
}

// observe is the workspace client's Observer: it feeds the metrics and
// the readiness of the workspace.
func (o *ops) observe(info workspace.RequestInfo) {
	o.metrics.ObserveRequest(info)
	o.history.call(info.Status)
	if reachable(info.Status) {
		o.lastReachable.Store(time.Now().UnixNano())
	}
}

// reachable reports whether an answer with that status shows the
// workspace reachable with a valid key: any answer but a 5xx or a refusal
// of the key.
func reachable(status int) bool {
	return status > 0 && status < 500 && status != 401 && status != 403
}

// ranPass is called after each recorded pass of a connector.
func (o *ops) ranPass(sum reconcile.Summary, err error) {
	if o == nil {
		return
	}
	o.metrics.ObserveRun(sum, err, time.Now())
	o.history.sample()
}

// Metrics returns the daemon's metrics (served by the admin server).
func (d *Daemon) Metrics() *metrics.Metrics { return d.ops.metrics }

// initOps seeds the metrics from state (the last runs, so that the
// last-success time survives a restart) and makes the state gauges read
// the daemon's store.
func (d *Daemon) initOps() error {
	for _, c := range d.connectors {
		last, ok, err := d.store.Runs.Last(c.Name)
		if err != nil {
			return err
		}
		if ok {
			d.ops.metrics.SetLastRun(c.Name, last.FinishedAt)
		}
		success, err := lastSuccess(d.store, c.Name)
		if err != nil {
			return err
		}
		d.ops.metrics.SetLastSuccess(c.Name, success)
	}
	names := make([]string, len(d.connectors))
	logs := map[string]bool{}
	for i, c := range d.connectors {
		names[i] = c.Name
		logs[c.Name] = c.Config.Activities.Enabled()
	}
	store := d.store
	d.ops.metrics.SetStateGauges(func() (metrics.StateGauges, error) { return stateGauges(store, names, logs) })
	connectors := d.connectors
	d.ops.metrics.SetQuotas(func() []metrics.ConnectorQuota {
		var out []metrics.ConnectorQuota
		for _, c := range connectors {
			for _, q := range c.Quotas() {
				out = append(out, metrics.ConnectorQuota{Connector: c.Name, Quota: q})
			}
		}
		return out
	})
	d.ops.metrics.SetReplicationLags(func() []metrics.ReplicationLag {
		var out []metrics.ReplicationLag
		for _, c := range connectors {
			lr, ok := c.Source.(replicationLagger)
			if !ok {
				continue
			}
			l := metrics.ReplicationLag{Connector: c.Name}
			l.Slot, l.Bytes, l.HasBytes = lr.ReplicationLag()
			if rd, ok := c.Source.(replicationDelayer); ok {
				var d time.Duration
				d, l.HasSeconds = rd.ReplicationDelay()
				l.Seconds = d.Seconds()
			}
			if l.HasBytes || l.HasSeconds {
				out = append(out, l)
			}
		}
		return out
	})
	return nil
}

// replicationLagger is a source reading a database's replication slot
// (PostgreSQL with changes: logical): the WAL its slot holds, as last
// seen; ok false before it was seen.
type replicationLagger interface {
	ReplicationLag() (slot string, bytes int64, ok bool)
}

// replicationDelayer is a replicationLagger that also measures for how
// long its stream has been behind (MySQL with changes: binlog); ok false
// when it does not stream.
type replicationDelayer interface {
	ReplicationDelay() (time.Duration, bool)
}

// stateGauges reads the figures of every connector from state.
func stateGauges(st *state.Store, names []string, logs map[string]bool) (metrics.StateGauges, error) {
	g := metrics.StateGauges{ActivitiesPending: -1}
	for _, n := range names {
		cg := metrics.ConnectorGauges{Connector: n}
		var err error
		if cg.Links, err = st.Links.Count(n); err != nil {
			return g, err
		}
		if cg.DeadLetters, err = st.DeadLetters.Count(n); err != nil {
			return g, err
		}
		if cg.Conflicts, err = st.Conflicts.Count(n); err != nil {
			return g, err
		}
		if cg.FieldWarnings, err = st.FieldWarnings.Count(n); err != nil {
			return g, err
		}
		if _, cg.MassDeleteRefused, err = st.RefusedDeletes.Get(n); err != nil {
			return g, err
		}
		if logs[n] {
			c, err := st.Activities.Counts(n)
			if err != nil {
				return g, err
			}
			cg.Activities = &metrics.ActivityGauges{Logged: c.Logged, Updated: c.Updated, Skipped: c.Skipped, Failed: c.Failed}
			if g.ActivitiesPending, err = st.Activities.CountPending(); err != nil {
				return g, err
			}
		}
		g.Connectors = append(g.Connectors, cg)
	}
	var err error
	g.InboxPending, err = st.Inbox.Count()
	return g, err
}

// SetReceiver tells the daemon that the webhook receiver listens on addr:
// the status shows it, readiness checks that it accepts connections, and
// the metrics read its counters through stats (nil: none).
func (d *Daemon) SetReceiver(addr string, stats func() metrics.WebhookStats) {
	d.ops.mu.Lock()
	d.ops.receiver = addr
	d.ops.mu.Unlock()
	d.ops.metrics.SetWebhookStats(stats)
}

// AddReadyCheck adds a readiness check: GET /readyz fails while fn
// returns an error. fn must answer within the context's deadline.
func (d *Daemon) AddReadyCheck(name string, fn func(context.Context) error) {
	d.ops.mu.Lock()
	d.ops.checks = append(d.ops.checks, readyCheck{name, fn})
	d.ops.mu.Unlock()
}

// dialable checks that something accepts TCP connections on addr (an
// unspecified host is dialled on loopback).
func dialable(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return err
	}
	return conn.Close()
}

// ObserveReverse shows the reverse direction r (nil: none) to operators:
// the receiver's address in the status and in readiness, and the
// receiver's and applier's counters in the metrics.
func (d *Daemon) ObserveReverse(r *Running) {
	if r == nil || r.Applier == nil {
		return
	}
	d.SetReceiver(r.Addr, func() metrics.WebhookStats {
		var s metrics.WebhookStats
		if r.Receiver != nil {
			rs := r.Receiver.Stats()
			s.Accepted, s.Duplicates, s.Ignored, s.Refused, s.Failed = rs.Accepted, rs.Duplicates, rs.Ignored, rs.Refused, rs.Failed
			s.RefusedBy = rs.RefusedBy
		}
		if r.Applier != nil {
			as := r.Applier.Stats()
			s.Echoes, s.PutOffs, s.PutOffDeadLetters = as.Echoes, as.PutOffs, as.PutOffDeadLetters
		}
		return s
	})
}
