package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reverse"
	"github.com/syncd-io/syncd/webhook"
)

// reverseTargets are the connectors acting on workspace changes. Each
// shares its connector's guard with the forward passes: the applier holds
// it for its rounds, and writes through it, so that a forward run reads
// again the records written back while it goes on (reconcile.Guard).
func (d *Daemon) reverseTargets() []*reverse.Target {
	var out []*reverse.Target
	for _, c := range d.connectors {
		if !c.Config.ReadsWorkspace() {
			continue
		}
		t := &reverse.Target{
			Name: c.Name, Source: c.Config.Source, Mapper: c.Mapper,
			Direction: c.Config.Direction, Conflict: c.Config.Conflict,
			OnWorkspaceCreate: c.Config.OnWorkspaceCreate, OnWorkspaceDelete: c.Config.OnWorkspaceDelete,
			EditAfterDelete: c.Config.EditAfterDelete,
			SoftDelete:      c.Type.SoftDelete, StagesCreates: c.Type.StagesCreates, Lock: c.guard,
			MassDeleteThreshold: c.Config.MassDeleteThreshold, AllowMassDelete: c.allowMassDelete,
			Streams: func() bool {
				lr, ok := c.Source.(interface {
					ReplicationLag() (slot string, bytes int64, ok bool)
				})
				if !ok {
					return false
				}
				slot, _, _ := lr.ReplicationLag()
				return slot != ""
			},
			Revisited: func() {
				if t := c.forward.Load(); t != nil {
					poke(*t)
				}
			},
		}
		if w, ok := c.Source.(connector.Writer); ok && c.Type.Writable {
			t.Writer = c.guard.Writer(w)
			t.Getter, _ = c.Source.(connector.Getter)
		}
		out = append(out, t)
	}
	return out
}

// NewApplier returns an applier over the daemon's state, workspace and
// connectors, nil when no connector acts on workspace changes.
func (d *Daemon) NewApplier() (*reverse.Applier, error) {
	targets := d.reverseTargets()
	if len(targets) == 0 {
		return nil, nil
	}
	return reverse.New(reverse.Options{Store: reverse.StoreOf(d.store), Workspace: d.ws, Targets: targets, Log: logrus.NewEntry(d.log), Gather: d.gather})
}

// startReverse is start-up step 2 (see Start): with autoRegister, the
// subscription is ensured; the receiver listens on webhooks.listen (when
// set); each connector catches up on what was missed while syncd was
// away, and the inbox is applied. It adds the receiver, the applier and
// the catch-up loops to r's services. Nothing happens when no connector
// acts on workspace changes.
func (d *Daemon) startReverse(ctx context.Context, r *Running, sched *schedule) error {
	a, err := d.NewApplier()
	if err != nil {
		return err
	}
	lg, err := d.newActivityLogger(sched)
	if err != nil || (a == nil && lg == nil) {
		return err
	}
	r.Applier, r.Activities = a, lg
	if lg != nil {
		d.activities.Store(lg)
	}
	log := logrus.NewEntry(d.log).WithField(logfield.Component, "reverse")
	if err := d.ensureWebhook(ctx, log); err != nil {
		return err
	}
	if err := d.startReceiver(r, a, lg, log); err != nil {
		return err
	}
	if lg != nil {
		d.startActivities(ctx, r, lg)
	}
	if a == nil {
		return nil
	}
	for _, c := range d.reverseConnectors() {
		if _, err := a.CatchUp(ctx, c.Name); err != nil {
			c.log.WithError(err).Warn("catch-up of workspace changes failed at start-up; it runs again on the schedule")
		}
	}
	if err := a.Drain(ctx); err != nil {
		log.WithError(err).Warn("applying the inbox at start-up failed; the applier goes on trying")
	}
	r.add(&service{name: "applier", serve: a.Run})
	for _, c := range d.reverseConnectors() {
		r.add(catchUpLoop(a, c, sched.trigger(c)))
	}
	d.ObserveReverse(r)
	return nil
}

// reverseConnectors are the connectors that read workspace changes.
func (d *Daemon) reverseConnectors() []*Connector {
	var out []*Connector
	for _, c := range d.connectors {
		if c.Config.ReadsWorkspace() {
			out = append(out, c)
		}
	}
	return out
}

// ensureWebhook makes sure the subscription exists and is enabled, with
// webhooks.autoRegister.
func (d *Daemon) ensureWebhook(ctx context.Context, log *logrus.Entry) error {
	wc := d.cfg.Webhooks
	if !wc.AutoRegister {
		return nil
	}
	reg, err := EnsureWebhookEvents(ctx, d.ws, d.store.Webhooks, wc.PublicURL, WebhookEventsFor(d.cfg), log)
	if err != nil {
		return fmt.Errorf("webhooks.autoRegister: %w", err)
	}
	log.WithFields(logrus.Fields{logfield.Webhook: reg.Webhook.ID, logfield.Created: reg.Created, logfield.Updated: reg.Updated, logfield.Rotated: reg.Rotated}).
		Info("webhook subscription ensured")
	return nil
}

// startReceiver listens on webhooks.listen and adds the receiver to r's
// services: it stops accepting when the daemon stops, and the requests
// in flight finish (an event they accept is in the inbox).
func (d *Daemon) startReceiver(r *Running, a *reverse.Applier, lg *activity.Logger, log *logrus.Entry) error {
	wc := d.cfg.Webhooks
	if wc.Listen == "" {
		log.Warn("webhooks.listen is not set: workspace changes arrive only through catch-up")
		return nil
	}
	opts := webhook.Options{Store: webhook.StoreOf(d.store), Legacy: wc.LegacySignatures, MaxBodyBytes: wc.MaxBodyBytes, Log: log}
	if a != nil {
		opts.Accepted = a.Notify
	}
	if lg != nil {
		opts.Activities, opts.ActivityTypes, opts.ActivityAccepted = d.store.Activities, d.activityTypes(), lg.Notify
	}
	recv, err := webhook.New(opts)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(wc.Path, recv)
	d.mountConnectorHooks(mux, log)
	r.Receiver = recv
	if err := d.serveWebhooks(r, mux, log); err != nil {
		return err
	}
	log.WithField(logfield.Path, wc.Path).Info("workspace webhooks accepted")
	return nil
}

// catchUpLoop catches the connector up on each trigger of its schedule.
func catchUpLoop(a *reverse.Applier, c *Connector, trigger <-chan struct{}) *service {
	return &service{name: "catch-up loop of " + c.Name, serve: func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-trigger:
			}
			if _, err := a.CatchUp(ctx, c.Name); err != nil && ctx.Err() == nil {
				c.log.WithError(err).Warn("catch-up of workspace changes failed; it runs again on the schedule")
			}
		}
	}}
}

// RunReverseOnce catches every reverse connector up and applies the
// inbox until it is empty (`run --once`). It reports the applier's
// counters.
func (d *Daemon) RunReverseOnce(ctx context.Context) (reverse.Stats, error) {
	a, err := d.NewApplier()
	if err != nil || a == nil {
		return reverse.Stats{}, err
	}
	var errs []error
	for _, c := range d.reverseConnectors() {
		if _, err := a.CatchUp(ctx, c.Name); err != nil {
			errs = append(errs, fmt.Errorf("connector %s: %w", c.Name, err))
		}
	}
	if err := a.Drain(ctx); err != nil {
		errs = append(errs, err)
	}
	return a.Stats(), errors.Join(errs...)
}
