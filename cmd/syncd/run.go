package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/reverse"
	"github.com/syncd-io/syncd/workspace"
)

func init() {
	registerCommand("run", "run the sync daemon (or one pass with --once)", func(m *Main) Command { return &RunCommand{m: m} })
}

// RunCommand runs the daemon: every connector on its schedule, until
// SIGTERM; or one pass of every connector with --once.
type RunCommand struct {
	m *Main
}

// Run parses the flags and runs.
func (c *RunCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("run", "run --config FILE [--once] [--allow-mass-delete] [--allow-mass-rekey]")
	conf := c.m.configFlag(fs)
	once := fs.Bool("once", false, "run one pass of every connector, then exit")
	allowMassDelete := fs.Bool("allow-mass-delete", false, "let a run delete more than the connector's massDeleteThreshold of its linked contacts")
	allowMassRekey := fs.Bool("allow-mass-rekey", false, "let a run that looks like a change of the source's ids go on: new records take over the contacts of vanished ones with the same phone or e-mail")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, log, err := conf.loadWithLog()
	if err != nil {
		return err
	}
	signalLogger.Store(log)
	defer signalLogger.Store(nil)
	st, err := openStateFile(cfg.State.Path, createState)
	if err != nil {
		return fmt.Errorf("open state: %w", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			log.WithError(err).Error("close state")
		}
	}()
	d, err := daemon.New(ctx, cfg, daemon.Options{Log: log, AllowMassDelete: *allowMassDelete, AllowMassRekey: *allowMassRekey, Version: Version, ConfigPath: conf.path, Store: st})
	if err != nil {
		return err
	}
	defer func() {
		if err := d.Close(); err != nil {
			log.WithError(err).Error("close")
		}
	}()
	if err := checkCredentials(ctx, d.Workspace()); err != nil {
		return err
	}
	if *once {
		stopWatch := newPassWatcher(c.m.Stderr, log, d.Connectors()).start(ctx)
		sums, err := d.RunOnce(ctx)
		stopWatch()
		for _, s := range sums {
			fmt.Fprintf(c.m.Stdout, "%s: %s\n", s.Connector, s)
		}
		rs, rerr := d.RunReverseOnce(ctx)
		if rs.Events > 0 {
			fmt.Fprintf(c.m.Stdout, "workspace changes: %s\n", reverseSummary(rs))
		}
		as, aerr := d.RunActivitiesOnce(ctx)
		if as.Events > 0 {
			fmt.Fprintf(c.m.Stdout, "calls and texts: events=%d written=%d failed=%d\n", as.Events, as.Written, as.Failed)
		}
		return errors.Join(err, rerr, aerr)
	}
	return d.Run(ctx)
}

// reverseSummary is one line of what the reverse direction did.
func reverseSummary(s reverse.Stats) string {
	return fmt.Sprintf("events=%d written=%d created=%d deleted=%d unlinked=%d echoes=%d unchanged=%d stale=%d conflicts=%d ignored=%d failed=%d",
		s.Events, s.Written, s.Created, s.Deleted, s.Unlinked, s.Echoes, s.Unchanged, s.Stale, s.Conflicts, s.Ignored, s.Failed)
}

// checkCredentials fails fast, with the fix, when the workspace refuses
// the API key. It asks GET /v1/organization, or the custom-field list
// where that answers 404 (workspace.Client.CheckAccess logs which).
func checkCredentials(ctx context.Context, ws *workspace.Client) error {
	_, err := ws.CheckAccess(ctx)
	switch {
	case err == nil:
		return nil
	case workspace.IsUnauthorized(err):
		return fmt.Errorf("the workspace refused the API key (workspace.apiKey): %w", err)
	default:
		return fmt.Errorf("workspace not reachable at start-up (workspace.baseURL): %w", err)
	}
}

// newLogger builds the process logger from the configuration.
func newLogger(m *Main, lc config.LogConfig) *logrus.Logger {
	log := logrus.New()
	log.SetOutput(m.Stderr)
	if lvl, err := logrus.ParseLevel(lc.Level); err == nil {
		log.SetLevel(lvl)
	}
	if lc.Format == "json" {
		log.SetFormatter(&logrus.JSONFormatter{})
	} else {
		log.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, DisableColors: true})
	}
	return log
}
