package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/reverse"
	"github.com/syncd-io/syncd/webhook"
)

// Reverse is the reverse direction of a running daemon: the webhook
// receiver, the applier draining the inbox, and the catch-up of each
// connector at start-up and on its schedule.
type Reverse struct {
	Applier  *reverse.Applier
	Receiver *webhook.Receiver
	// Addr is the receiver's address, "" when none listens.
	Addr string

	srv    *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// reverseTargets are the connectors acting on workspace changes.
func (d *Daemon) reverseTargets() []*reverse.Target {
	var out []*reverse.Target
	for _, c := range d.connectors {
		if !c.Config.ReadsWorkspace() {
			continue
		}
		w, _ := c.Source.(connector.Writer)
		if !c.Type.Writable {
			w = nil
		}
		out = append(out, &reverse.Target{
			Name: c.Name, Source: c.Config.Source, Mapper: c.Mapper, Writer: w,
			Direction: c.Config.Direction, Conflict: c.Config.Conflict,
			OnWorkspaceCreate: c.Config.OnWorkspaceCreate, OnWorkspaceDelete: c.Config.OnWorkspaceDelete,
			SoftDelete: c.Type.SoftDelete, Lock: &c.apply,
		})
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
	return reverse.New(reverse.Options{Store: d.store, Workspace: d.ws, Targets: targets, Log: logrus.NewEntry(d.log)})
}

// StartReverse starts the reverse direction: with autoRegister, it first
// makes sure the subscription exists and is enabled; then the receiver
// listens on webhooks.listen (when set), each connector catches up on
// what was missed while syncd was away, and the inbox (events left by an
// earlier run first) is applied, before StartReverse returns: the first
// forward passes, which Serve starts, must not take records written back
// before a crash for changes of their own and send them over newer
// workspace versions. Then the applier keeps applying the inbox, and each
// connector catches up again on its schedule. It returns nil when no
// connector acts on workspace changes. Stop ends it.
func (d *Daemon) StartReverse(ctx context.Context) (*Reverse, error) {
	a, err := d.NewApplier()
	if err != nil || a == nil {
		return nil, err
	}
	log := logrus.NewEntry(d.log).WithField("component", "reverse")
	wc := d.cfg.Webhooks
	if wc.AutoRegister {
		reg, err := EnsureWebhook(ctx, d.ws, d.store, wc.PublicURL, log)
		if err != nil {
			return nil, fmt.Errorf("webhooks.autoRegister: %w", err)
		}
		log.WithFields(logrus.Fields{"webhook": reg.Webhook.ID, "created": reg.Created, "updated": reg.Updated, "rotated": reg.Rotated}).
			Info("webhook subscription ensured")
	}
	r := &Reverse{Applier: a}
	if wc.Listen != "" {
		recv, err := webhook.New(webhook.Options{Store: d.store, Legacy: wc.LegacySignatures, MaxBodyBytes: wc.MaxBodyBytes,
			Accepted: a.Notify, Log: log})
		if err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", wc.Listen)
		if err != nil {
			return nil, fmt.Errorf("webhooks.listen: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle(wc.Path, recv)
		r.Receiver, r.Addr = recv, ln.Addr().String()
		r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.WithError(err).Error("webhook receiver stopped")
			}
		}()
		log.WithField("address", r.Addr).WithField("path", wc.Path).Info("webhook receiver listening")
	} else {
		log.Warn("webhooks.listen is not set: workspace changes arrive only through catch-up")
	}

	for _, c := range d.connectors {
		if c.Config.ReadsWorkspace() {
			if _, err := a.CatchUp(ctx, c.Name); err != nil {
				c.log.WithError(err).Warn("catch-up of workspace changes failed at start-up; it runs again on the schedule")
			}
		}
	}
	if err := a.Drain(ctx); err != nil {
		log.WithError(err).Warn("applying the inbox at start-up failed; the applier goes on trying")
	}

	ctx, r.cancel = context.WithCancel(ctx)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = a.Run(ctx)
	}()
	sched := cron.New(cron.WithLogger(cron.DiscardLogger))
	for _, c := range d.connectors {
		if !c.Config.ReadsWorkspace() {
			continue
		}
		trigger := make(chan struct{}, 1)
		if _, err := sched.AddFunc(c.schedule, func() { poke(trigger) }); err != nil {
			r.cancel()
			r.Stop()
			return nil, err
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-trigger:
				}
				if _, err := a.CatchUp(ctx, c.Name); err != nil && ctx.Err() == nil {
					c.log.WithError(err).Warn("catch-up of workspace changes failed; it runs again on the schedule")
				}
			}
		}()
	}
	sched.Start()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-ctx.Done()
		<-sched.Stop().Done()
	}()
	return r, nil
}

// Stop stops the receiver (requests in flight finish: an event they
// accept is in the inbox), then the applier after its round, and waits.
func (r *Reverse) Stop() {
	if r == nil {
		return
	}
	if r.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = r.srv.Shutdown(ctx)
		cancel()
	}
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
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
	for _, c := range d.connectors {
		if c.Config.ReadsWorkspace() {
			if _, err := a.CatchUp(ctx, c.Name); err != nil {
				errs = append(errs, fmt.Errorf("connector %s: %w", c.Name, err))
			}
		}
	}
	if err := a.Drain(ctx); err != nil {
		errs = append(errs, err)
	}
	return a.Stats(), errors.Join(errs...)
}
