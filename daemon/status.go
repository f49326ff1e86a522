package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/internal/remote"
	"github.com/syncd-io/syncd/state"
)

// Readiness settings.
const (
	// ReachableWithin is how recent the workspace's last answer must be
	// for the daemon to be ready without asking it again.
	ReachableWithin = 5 * time.Minute
	// probeEvery bounds the readiness probes of an idle daemon (a GET
	// /v1/organization each): at most one per probeEvery.
	probeEvery = 30 * time.Second
	// checkTimeout bounds each readiness check.
	checkTimeout = 5 * time.Second
	// successLookback is how many recent runs are searched for the last
	// successful one.
	successLookback = 50
)

// BuildStatus describes the configured connectors from the state file
// alone: what `syncd status` shows when no daemon runs. Version is the
// running binary's.
// configPath names the configuration's file in the commands it shows.
func BuildStatus(cfg *config.Config, st *state.Store, version, configPath string) (admin.Status, error) {
	out := admin.Status{Version: version, State: admin.StateInfo{Path: st.Path()}}
	var err error
	if out.State.SchemaVersion, err = st.SchemaVersion(); err != nil {
		return out, fmt.Errorf("read schema version: %w", err)
	}
	for _, cc := range cfg.Connectors {
		cs, err := connectorStatus(st, cc, configPath)
		if err != nil {
			return out, fmt.Errorf("connector %s: %w", cc.Name, err)
		}
		out.Connectors = append(out.Connectors, cs)
		out.DeadLetters += cs.DeadLetters
		out.FieldWarnings += cs.FieldWarnings
		out.Conflicts += cs.Conflicts
	}
	if out.InboxPending, err = st.Inbox.Count(); err != nil {
		return out, err
	}
	if out.ActivitiesPending, err = st.Activities.CountPending(); err != nil {
		return out, err
	}
	return out, nil
}

func connectorStatus(st *state.Store, cc config.ConnectorConfig, configPath string) (admin.ConnectorStatus, error) {
	cs := admin.ConnectorStatus{Name: cc.Name, Type: cc.Type, Source: cc.Source, Direction: cc.Direction.String(), Schedule: cc.Schedule}
	var err error
	if last, ok, err := st.Runs.Last(cc.Name); err != nil {
		return cs, err
	} else if ok {
		cs.LastRun = &admin.Run{ID: last.ID, Run: last}
		cs.LastResult = cs.LastRun.Result()
	}
	if cs.LastSuccess, err = lastSuccess(st, cc.Name); err != nil {
		return cs, err
	}
	if cs.Checkpoints, err = st.Checkpoints.All(cc.Name); err != nil {
		return cs, err
	}
	if cs.Links, err = st.Links.Count(cc.Name); err != nil {
		return cs, err
	}
	if cs.DeadLetters, err = st.DeadLetters.Count(cc.Name); err != nil {
		return cs, err
	}
	if cs.Conflicts, err = st.Conflicts.Count(cc.Name); err != nil {
		return cs, err
	}
	if cs.FieldWarnings, err = st.FieldWarnings.Count(cc.Name); err != nil {
		return cs, err
	}
	if cs.RefusedDelete, err = refusedDelete(st.RefusedDeletes, configPath, cc.Name); err != nil {
		return cs, err
	}
	if cc.Activities.Enabled() {
		c, err := st.Activities.Counts(cc.Name)
		if err != nil {
			return cs, err
		}
		cs.Activities = &admin.ActivityStatus{Logged: c.Logged, Updated: c.Updated, Skipped: c.Skipped, Failed: c.Failed}
	}
	return cs, nil
}

// lastSuccess is when the connector's newest pass that ended without
// error finished, among its recent runs (a retry of one dead letter does
// not count); zero when none did.
func lastSuccess(st *state.Store, connector string) (time.Time, error) {
	runs, err := st.Runs.List(connector, successLookback)
	if err != nil {
		return time.Time{}, err
	}
	for _, r := range runs {
		if !r.FinishedAt.IsZero() && r.Err == "" && r.Kind != "retry" {
			return r.FinishedAt, nil
		}
	}
	return time.Time{}, nil
}

// Status describes the running daemon: BuildStatus plus what only the
// process knows (since when it runs, which passes are in progress, the
// webhook receiver). It implements admin.Daemon.
func (d *Daemon) Status(ctx context.Context) (admin.Status, error) {
	out, err := BuildStatus(d.cfg, d.store, d.ops.version, d.configPath)
	if err != nil {
		return out, err
	}
	out.Live, out.StartedAt = true, d.ops.startedAt
	d.ops.mu.Lock()
	out.Webhooks = d.ops.receiver
	d.ops.mu.Unlock()
	out.Rates = remote.Rates()
	out.ReplicationOrphans = d.replicationOrphans()
	for i := range out.Connectors {
		// A pass this process started and has not finished is running
		// (one from before the start was interrupted).
		if r := out.Connectors[i].LastRun; r != nil && r.FinishedAt.IsZero() && !r.StartedAt.Before(d.ops.startedAt) {
			out.Connectors[i].Running = true
			out.Connectors[i].LastResult = "running"
		}
		if c, ok := d.Connector(out.Connectors[i].Name); ok {
			out.Connectors[i].Mode = c.Mode()
			out.Connectors[i].Notice = c.Notice()
			for _, q := range c.Quotas() {
				out.Connectors[i].Quotas = append(out.Connectors[i].Quotas, admin.NewQuota(q))
			}
		}
	}
	d.addProgress(&out)
	return out, nil
}

// Ready runs the readiness checks: the state file answers, the workspace
// answered recently (else it is asked, at most every 30 s), and every
// check added with AddReadyCheck or SetReceiver passes. It implements
// admin.Daemon.
func (d *Daemon) Ready(ctx context.Context) []admin.Check {
	checks := []admin.Check{d.checkState(), d.checkWorkspace(ctx)}
	d.ops.mu.Lock()
	extra := append([]readyCheck(nil), d.ops.checks...)
	if addr := d.ops.receiver; addr != "" {
		extra = append(extra, readyCheck{"webhooks", func(ctx context.Context) error {
			if err := dialable(ctx, addr); err != nil {
				return fmt.Errorf("receiver not accepting connections on %s: %w", addr, err)
			}
			return nil
		}})
	}
	d.ops.mu.Unlock()
	for _, c := range extra {
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := c.fn(cctx)
		cancel()
		checks = append(checks, result(c.name, err, "ok"))
	}
	return checks
}

func result(name string, err error, ok string) admin.Check {
	if err != nil {
		return admin.Check{Name: name, OK: false, Detail: err.Error()}
	}
	return admin.Check{Name: name, OK: true, Detail: ok}
}

func (d *Daemon) checkState() admin.Check {
	v, err := d.store.SchemaVersion()
	return result("state", err, fmt.Sprintf("open, schema %d", v))
}

// checkWorkspace is ready when the workspace answered within
// ReachableWithin; otherwise it asks GET /v1/organization (or the
// custom-field list where that answers 404), reusing the
// answer for probeEvery so that probes cannot spend the API quota.
func (d *Daemon) checkWorkspace(ctx context.Context) admin.Check {
	const name = "workspace"
	if last := d.ops.lastReachable.Load(); last > 0 {
		if ago := time.Since(time.Unix(0, last)); ago < ReachableWithin {
			return result(name, nil, fmt.Sprintf("last answer %s ago", ago.Round(time.Second)))
		}
	}
	d.ops.probeMu.Lock()
	defer d.ops.probeMu.Unlock()
	if p := d.ops.probe; !p.at.IsZero() && time.Since(p.at) < probeEvery {
		return result(name, p.err, "reachable")
	}
	pctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	route, err := d.ws.CheckAccess(pctx)
	if err != nil {
		err = fmt.Errorf("no answer within %s and %s failed: %w", ReachableWithin, route, err)
		if errors.Is(pctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s, and none to %s within %s", ReachableWithin, route, checkTimeout)
		}
	}
	d.ops.probe = probeResult{at: time.Now(), err: err}
	return result(name, err, "reachable")
}
