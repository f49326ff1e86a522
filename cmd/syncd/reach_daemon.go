package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// throughDaemon asks the running daemon that holds the state file,
// through its admin API.
type throughDaemon struct {
	cl    *admin.Client
	at    string // the address asked
	path  string // the state file the daemon holds
	notes io.Writer
	log   *logrus.Logger
}

func (m *Main) throughDaemon(cfg *config.Config, cl *admin.Client, at string) *throughDaemon {
	return &throughDaemon{cl: cl, at: at, path: cfg.State.Path, notes: m.Stderr, log: newLogger(m, cfg.Log)}
}

func (t *throughDaemon) via() string { return "the running daemon at " + t.at }

func (t *throughDaemon) Close() error { return nil }

// Status is the daemon's status and readiness.
func (t *throughDaemon) Status(ctx context.Context) (admin.Status, *admin.Readiness, error) {
	st, err := t.cl.Status(ctx)
	if err != nil {
		return st, nil, err
	}
	r, err := t.cl.Ready(ctx)
	if err != nil {
		return st, nil, err
	}
	return st, &r, nil
}

func (t *throughDaemon) DeadLetters(ctx context.Context, connector string) ([]admin.DeadLetter, error) {
	return t.cl.DeadLetters(ctx, connector)
}

func (t *throughDaemon) FieldWarnings(ctx context.Context, connector string) ([]admin.FieldWarning, error) {
	return t.cl.FieldWarnings(ctx, connector)
}

func (t *throughDaemon) RetryDeadLetter(ctx context.Context, id uint64) (admin.RetryResponse, error) {
	return t.cl.RetryDeadLetter(ctx, id)
}

func (t *throughDaemon) DropDeadLetter(ctx context.Context, id uint64) error {
	return t.cl.DropDeadLetter(ctx, id)
}

func (t *throughDaemon) Conflicts(ctx context.Context, connector string, limit int) ([]admin.Conflict, error) {
	return t.cl.Conflicts(ctx, connector, limit)
}

func (t *throughDaemon) HeldMatches(ctx context.Context, connector string) ([]admin.HeldMatch, error) {
	return t.cl.HeldMatches(ctx, connector)
}

func (t *throughDaemon) ResolveHeldMatch(ctx context.Context, connector, externalID, contactID string) (reconcile.Summary, error) {
	return t.cl.ResolveHeldMatch(ctx, connector, externalID, contactID)
}

func (t *throughDaemon) HeldDeletes(ctx context.Context, connector string) ([]state.HeldDelete, error) {
	return t.cl.HeldDeletes(ctx, connector)
}

func (t *throughDaemon) SettleHeldDeletes(ctx context.Context, connector, action string) (int, error) {
	res, err := t.cl.SettleHeldDeletes(ctx, connector, action)
	return res.Approved + res.Dropped, err
}

// Resync asks the daemon to resync, showing its passes from its status
// meanwhile; the plan comes with the answer.
func (t *throughDaemon) Resync(ctx context.Context, r resyncAsk) ([]reconcile.Summary, error) {
	fmt.Fprintf(t.notes, "syncd: a daemon holds %s; asking it at %s\n", t.path, t.at)
	stop := r.Watch(newRemotePasses(ctx, t.cl), t.log, remoteEvery)
	resp, err := t.cl.Resync(ctx, r.ResyncRequest)
	stop()
	for _, e := range resp.Plan {
		r.Plan(e)
	}
	return resp.Summaries, err
}

func (t *throughDaemon) Backup(ctx context.Context, w io.Writer) (int64, error) {
	return t.cl.Backup(ctx, w)
}
