// Package daemon wires syncd together from its configuration: the state
// file, the workspace client, one reconciler per connector and their
// schedules. The run, resync, demo and bench commands all drive a Daemon,
// so that they exercise the same code the long-running process does.
// Daemon.Run (run.go) supervises its long-running parts: one group, one
// start order, one cancel and one shutdown budget.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// ErrBusy is returned when a connector is already running a pass.
var ErrBusy = errors.New("a run of this connector is in progress")

// Options are the command-line choices that are not configuration.
type Options struct {
	// Log is the process logger.
	Log *logrus.Logger
	// AllowMassDelete lifts the mass-delete breaker.
	AllowMassDelete bool
	// AllowMassRekey lets a pass that looks like a change of the source's
	// ids go on (reconcile.Options.AllowMassRekey).
	AllowMassRekey bool
	// StateOptions are passed to state.Open.
	StateOptions state.Options
	// Store, when set, is used instead of opening cfg.State.Path (the
	// daemon does not close it).
	Store *state.Store
	// Version is the running build's, for the status and the metrics.
	Version string
	// ConfigPath is the configuration's file, named in the commands the
	// status shows (syncd replication drop --config ...).
	ConfigPath string
	// Gather is how long the reverse direction's applier, idle and then
	// notified, waits for more of a person's edits before its round
	// (reverse.Options.Gather; 0 means its default).
	Gather time.Duration
}

// Daemon is a configured syncd.
type Daemon struct {
	cfg        *config.Config
	log        *logrus.Logger
	store      *state.Store
	ownStore   bool
	ws         *workspace.Client
	connectors []*Connector
	// activities is the running activity direction (nil when none):
	// a dead letter retry goes through it.
	activities atomic.Pointer[activity.Logger]
	ops        *ops // metrics and health, see ops.go
	gather     time.Duration
	configPath string
}

// Connector is one configured connector with its reconciler.
type Connector struct {
	Name    string
	Config  config.ConnectorConfig
	Type    connector.Type
	Source  connector.Source
	Mapper  *mapping.Mapper
	Recon   *reconcile.Reconciler
	running sync.Mutex
	guard   *reconcile.Guard // shared by forward passes and reverse rounds: see reverse.go
	// allowMassDelete lifts the mass-delete guards of both directions.
	allowMassDelete bool
	log             *logrus.Entry
	lastMu          sync.Mutex
	last            reconcile.Summary
	lastErr         error
	hasLast         bool
	// notice is what the connector did by itself that status shows: the
	// resync that followed a lost change position.
	notice   string
	schedule string
	ops      *ops
	tracker  *progress.Tracker
	store    *state.Store // for the refused mass deletes (refused.go)
	// forward is the forward loop's trigger once it runs: the write-back
	// pokes it when it asks a pass to read records again.
	forward atomic.Pointer[chan struct{}]
}

// New opens the state, the workspace client and every connector.
func New(ctx context.Context, cfg *config.Config, opts Options) (d *Daemon, err error) {
	log := opts.Log
	if log == nil {
		log = logrus.StandardLogger()
	}
	d = &Daemon{cfg: cfg, log: log, store: opts.Store, ops: newOps(opts.Version), gather: opts.Gather, configPath: opts.ConfigPath}
	opened := d // the returns below set d to nil
	defer func() {
		if err != nil {
			opened.Close()
		}
	}()
	if d.store == nil {
		if d.store, err = state.Open(cfg.State.Path, opts.StateOptions); err != nil {
			return nil, fmt.Errorf("open state: %w", err)
		}
		d.ownStore = true
	}
	whRoutes, err := d.store.Webhooks.Routes()
	if err != nil {
		return nil, fmt.Errorf("read webhook routes: %w", err)
	}
	wsOpts := WorkspaceOptions(cfg, log)
	wsOpts.Observer = d.ops.observe
	// The form of the webhook routes found out once, remembered in state.
	wsOpts.WebhookRoutes = whRoutes
	wsOpts.WebhookRoutesFound = RememberWebhookRoutes(d.store.Webhooks, logrus.NewEntry(log))
	d.ws, err = workspace.NewClient(wsOpts)
	if err != nil {
		return nil, fmt.Errorf("workspace client: %w", err)
	}
	customKeys, err := d.loadCustomFields(ctx)
	if err != nil {
		return nil, err
	}
	for _, cc := range cfg.Connectors {
		c, err := d.openConnector(ctx, cc, opts, customKeys)
		if err != nil {
			return nil, fmt.Errorf("connector %s: %w", cc.Name, err)
		}
		d.connectors = append(d.connectors, c)
	}
	if err := d.initOps(); err != nil {
		return nil, fmt.Errorf("read run history: %w", err)
	}
	d.startHistory()
	return d, nil
}

// WorkspaceOptions are the options of the workspace client New makes for
// cfg (without the observer that feeds the daemon's metrics).
func WorkspaceOptions(cfg *config.Config, log *logrus.Logger) workspace.ClientOptions {
	return workspace.ClientOptions{
		BaseURL:       cfg.Workspace.BaseURL,
		APIKey:        cfg.Workspace.APIKey,
		VersionHeader: cfg.Workspace.VersionHeader,
		Version:       cfg.Workspace.Version,
		RateLimit:     cfg.Workspace.RateLimit,
		Burst:         cfg.Workspace.Burst,
		Log:           logrus.NewEntry(log).WithField(logfield.Component, "workspace"),
		// Custom field values are written in this form, by each field's type.
		CustomFieldValues: cfg.Workspace.CustomFieldValues,
	}
}

func (d *Daemon) openConnector(ctx context.Context, cc config.ConnectorConfig, opts Options, customKeys []string) (*Connector, error) {
	t, ok := connector.Lookup(cc.Type)
	if !ok {
		return nil, fmt.Errorf("unknown connector type %q (known: %v)", cc.Type, connector.Types())
	}
	log := logrus.NewEntry(d.log).WithField(logfield.Connector, cc.Name)
	m, err := CompileMapping(cc, customKeys)
	if err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	m.SetCustomFieldTypes(d.ws)
	src, err := t.Open(ctx, connector.Options{Name: cc.Name, Settings: cc.Settings, Fields: m.SourceFields(), Log: log,
		ActivityTable: cc.Activities.TableSpec()})
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	guard := &reconcile.Guard{}
	tracker := d.newTracker()
	rec, err := reconcile.New(reconcile.Options{
		Connector:           cc.Name,
		Source:              cc.Source,
		Type:                t,
		Reader:              src,
		Mapper:              m,
		Store:               reconcile.StoreOf(d.store),
		Workspace:           d.ws,
		Workers:             cc.Workers,
		OnSourceDelete:      cc.OnSourceDelete,
		MassDeleteThreshold: cc.MassDeleteThreshold,
		AllowMassDelete:     opts.AllowMassDelete,
		MassRekeyThreshold:  cc.MassRekeyThreshold,
		AllowMassRekey:      opts.AllowMassRekey,
		Match:               cc.Match,
		OnMatch:             cc.OnMatch,
		OnAmbiguous:         cc.OnAmbiguous,
		Conflict:            cc.Conflict,
		WeighAppEdits:       cc.Direction.WritesBack(),
		EditAfterDelete:     cc.EditAfterDelete,
		OnWorkspaceDelete:   workspaceDeletePolicy(cc),
		OtherSources:        d.otherSources(cc.Name),
		Guard:               guard,
		Drain:               ShutdownBudget,
		Log:                 log,
		Progress:            tracker,
		Written:             func(l time.Duration) { d.ops.metrics.ObserveForwardLatency(cc.Name, l) },
	})
	if err != nil {
		src.Close()
		return nil, err
	}
	return &Connector{Name: cc.Name, Config: cc, Type: t, Source: src, Mapper: m, Recon: rec, guard: guard, allowMassDelete: opts.AllowMassDelete, log: log, schedule: cc.Schedule, ops: d.ops, tracker: tracker, store: d.store}, nil
}

// Store returns the daemon's state.
func (d *Daemon) Store() *state.Store { return d.store }

// Workspace returns the daemon's workspace client.
func (d *Daemon) Workspace() *workspace.Client { return d.ws }

// Config returns the daemon's configuration.
func (d *Daemon) Config() *config.Config { return d.cfg }

// Connectors returns the configured connectors, in configuration order.
func (d *Daemon) Connectors() []*Connector { return d.connectors }

// Connector returns the connector of that name.
func (d *Daemon) Connector(name string) (*Connector, bool) {
	for _, c := range d.connectors {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// Close closes every connector and the state file.
func (d *Daemon) Close() error {
	d.ops.history.close()
	var errs []error
	for _, c := range d.connectors {
		if err := c.Source.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close connector %s: %w", c.Name, err))
		}
	}
	if d.store != nil && d.ownStore {
		if err := d.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close state: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Notice returns what the connector last did by itself that an operator
// should know ("resynced by itself at ...: binlog mysql-bin.000012 was
// purged: ..."), or "".
func (c *Connector) Notice() string {
	c.lastMu.Lock()
	defer c.lastMu.Unlock()
	return c.notice
}

// Last returns the summary and error of the connector's last pass.
func (c *Connector) Last() (reconcile.Summary, error, bool) {
	c.lastMu.Lock()
	defer c.lastMu.Unlock()
	return c.last, c.lastErr, c.hasLast
}

// Quotas returns the API allowances the connector's source last saw;
// nil when it reports none (connector.QuotaReporter).
func (c *Connector) Quotas() []connector.Quota {
	if qr, ok := c.Source.(connector.QuotaReporter); ok {
		return qr.Quotas()
	}
	return nil
}

// Schedule returns the connector's cron spec.
func (c *Connector) Schedule() string { return c.schedule }

// RunOnce runs one forward pass of the connector unless one is already
// running (ErrBusy), and logs its summary line. When the source lost its
// change position (connector.ErrResyncNeeded), a full resync follows at
// once, then a pass that stores the new position; the summary is the
// resync's.
func (c *Connector) RunOnce(ctx context.Context) (reconcile.Summary, error) {
	if !c.running.TryLock() {
		return reconcile.Summary{}, ErrBusy
	}
	defer c.running.Unlock()
	sum, err := c.Recon.Run(ctx)
	c.record(sum, err)
	if errors.Is(err, connector.ErrResyncNeeded) && ctx.Err() == nil {
		c.log.WithError(err).Warn("source lost its change position; resyncing the connector")
		lost := err
		sum, err = c.Recon.Resync(ctx, reconcile.ResyncOptions{})
		c.record(sum, err)
		outcome := "resynced by itself"
		if err != nil {
			outcome = "resync by itself failed"
		}
		c.lastMu.Lock()
		c.notice = fmt.Sprintf("%s at %s: %v", outcome, time.Now().Format(time.RFC3339), lost)
		c.lastMu.Unlock()
		if err == nil && ctx.Err() == nil {
			// A pass at once stores the position the resync's snapshot
			// began at as the checkpoint, in place of the lost one:
			// else a process that ends first (run --once) would find
			// the lost position again and resync at every start.
			next, nerr := c.Recon.Run(ctx)
			c.record(next, nerr)
			err = nerr
		}
	}
	return sum, err
}

// Resync runs a full resync of the connector (waiting for a run in
// progress to end first).
func (c *Connector) Resync(ctx context.Context, o reconcile.ResyncOptions) (reconcile.Summary, error) {
	c.running.Lock()
	defer c.running.Unlock()
	sum, err := c.Recon.Resync(ctx, o)
	if !o.DryRun {
		c.record(sum, err)
	}
	return sum, err
}

func (c *Connector) record(sum reconcile.Summary, err error) {
	c.lastMu.Lock()
	c.last, c.lastErr, c.hasLast = sum, err, true
	c.lastMu.Unlock()
	c.ops.ranPass(sum, err)
	c.noteMassDelete(sum, err)
	entry := c.log.WithFields(sum.Fields())
	if errors.Is(err, connector.ErrBudgetSpent) {
		entry.WithError(err).Warn("sync pass stopped: api budget spent, resuming at the next schedule")
		return
	}
	if err != nil {
		entry.WithError(err).Error("sync pass stopped early")
		return
	}
	entry.Info("sync pass finished")
}

// RunOnce runs one pass of every connector, one after the other. The
// error joins the connectors' errors; records set aside are not errors,
// nor is a pass that stopped at its API budget (it is logged, recorded
// and resumed by the next pass).
func (d *Daemon) RunOnce(ctx context.Context) ([]reconcile.Summary, error) {
	var sums []reconcile.Summary
	var errs []error
	for _, c := range d.connectors {
		if ctx.Err() != nil {
			break
		}
		sum, err := c.RunOnce(ctx)
		sums = append(sums, sum)
		if err != nil && !errors.Is(err, connector.ErrBudgetSpent) {
			errs = append(errs, fmt.Errorf("connector %s: %w", c.Name, err))
		}
	}
	return sums, errors.Join(errs...)
}

// Resync runs a resync of the named connector, or of every connector when
// name is "". It implements the admin server's Daemon.
func (d *Daemon) Resync(ctx context.Context, name string, o reconcile.ResyncOptions) ([]reconcile.Summary, error) {
	targets := d.connectors
	if name != "" {
		c, ok := d.Connector(name)
		if !ok {
			return nil, fmt.Errorf("%w %q", admin.ErrUnknownConnector, name)
		}
		targets = []*Connector{c}
	}
	var sums []reconcile.Summary
	for _, c := range targets {
		sum, err := c.Resync(ctx, o)
		sums = append(sums, sum)
		if err != nil {
			return sums, fmt.Errorf("connector %s: %w", c.Name, err)
		}
	}
	return sums, nil
}

// otherSources are the workspace sources of every connector but name.
func (d *Daemon) otherSources(name string) []string {
	var out []string
	for _, cc := range d.cfg.Connectors {
		if cc.Name != name {
			out = append(out, cc.Source)
		}
	}
	return out
}

// workspaceDeletePolicy is the onWorkspaceDelete the forward pass follows:
// the connector's, when it reads the workspace at all.
func workspaceDeletePolicy(cc config.ConnectorConfig) policy.Delete {
	if !cc.ReadsWorkspace() {
		return ""
	}
	return cc.OnWorkspaceDelete
}
