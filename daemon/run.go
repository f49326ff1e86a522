package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reverse"
	"github.com/syncd-io/syncd/webhook"
)

// ShutdownBudget is how long the daemon has to stop once asked (the
// first SIGTERM): the batch in flight of every forward pass finishes
// within it (writes still going at its end are cut, and repeated by the
// next run without duplicates), webhook deliveries and admin requests in
// flight are answered, and the passes admin requests started end. It
// leaves room, within the 10 s a container runtime waits by default
// before SIGKILL, for recording the runs and closing the state file.
const ShutdownBudget = 7 * time.Second

// Parts selects the long-running parts Start runs.
type Parts uint8

const (
	// AdminPart is the admin API on admin.listen.
	AdminPart Parts = 1 << iota
	// ReversePart is the reverse direction: the webhook receiver, the
	// applier and each connector's catch-up on its schedule.
	ReversePart
	// ForwardPart is the forward schedules: every connector's pass at
	// start and then on its schedule.
	ForwardPart
	// AllParts is the whole daemon (Run).
	AllParts = AdminPart | ReversePart | ForwardPart
)

// Running is a started daemon: its parts run in one group until Stop,
// the end of Start's ctx, or the failure of one of them.
type Running struct {
	// Applier and Receiver are the reverse direction's; nil when it does
	// not run (no connector acts on workspace changes) or has no
	// receiver (webhooks.listen unset).
	Applier  *reverse.Applier
	Receiver *webhook.Receiver
	// Activities is the activity direction; nil when no connector logs
	// activities.
	Activities *activity.Logger
	// Addr is the webhook receiver's address, "" when none listens.
	Addr string
	// AdminAddr is the admin server's address, "" when none listens.
	AdminAddr string

	d      *Daemon
	cancel context.CancelFunc
	group  *errgroup.Group
	// stopping ends ShutdownBudget after the group's context: the
	// deadline of every part's drain.
	stopping    context.Context
	endStopping context.CancelFunc
	services    []*service
}

// service is one long-running part. serve runs it until ctx ends, then
// stops it within the shutdown budget; close releases what it holds
// (its listener) when start-up fails before it is served.
type service struct {
	name  string
	serve func(ctx context.Context) error
	close func()
}

// Run runs the daemon until ctx ends (the first SIGTERM) or a part
// fails, then stops every part within ShutdownBudget. The caller closes
// the daemon afterwards (the state file last). See Start for the order.
func (d *Daemon) Run(ctx context.Context) error {
	r, err := d.Start(ctx, AllParts)
	if err != nil {
		return err
	}
	d.log.WithField(logfield.Connectors, len(d.connectors)).Info("syncd running")
	err = r.Wait()
	d.log.Info("all connectors stopped")
	return err
}

// StartReverse starts the reverse direction alone (for tests, which
// drive forward passes themselves).
func (d *Daemon) StartReverse(ctx context.Context) (*Running, error) {
	return d.Start(ctx, ReversePart)
}

// Start starts the selected parts and returns once start-up is done.
//
// Start-up, in this order:
//  1. the admin API listens (status and readiness during start-up);
//  2. the reverse direction catches up: the webhook subscription is
//     ensured (webhooks.autoRegister), the receiver serves (serveNow), each
//     connector lists what it missed while syncd was away, and the inbox
//     (events left by an earlier run first) is applied; all before the
//     first forward pass, which must not take records written back
//     before a crash for changes of their own and send them over newer
//     workspace versions. The observers of polled tables read from the
//     start of this step (observeNow);
//  3. the parts run in one group, started in this order: admin server,
//     webhook receiver (serving since step 2), applier, catch-up loops, forward loops (each
//     connector's first pass at once), and the one cron scheduler that
//     triggers the catch-up and forward loops.
//
// Stop: one cancel (Start's ctx, Stop, or a part failing) ends the
// group's context and every part stops on its own within ShutdownBudget:
// the forward loops finish their batch in flight, the applier its round,
// the scheduler and the catch-up loops stop, the receiver and the admin
// server answer the requests in flight. Wait returns when all have, and
// the passes admin requests started have ended too.
func (d *Daemon) Start(ctx context.Context, parts Parts) (*Running, error) {
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	r := &Running{d: d, cancel: cancel, group: g}
	r.stopping, r.endStopping = budgetAfter(gctx)
	if err := d.startParts(gctx, r, parts); err != nil {
		for _, s := range r.services {
			if s.close != nil {
				s.close()
			}
		}
		cancel()
		r.endStopping()
		return nil, err
	}
	for _, s := range r.services {
		g.Go(func() error {
			if err := s.serve(gctx); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			return nil
		})
	}
	return r, nil
}

// startParts runs start-up steps 1 and 2 and lists the services of step 3
// in r.services, in their order.
func (d *Daemon) startParts(ctx context.Context, r *Running, parts Parts) error {
	if parts&AdminPart != 0 {
		if err := d.startAdmin(ctx, r); err != nil {
			return err
		}
	}
	var sched *schedule
	if parts&(ReversePart|ForwardPart) != 0 {
		sched = newSchedule()
	}
	if parts&ForwardPart != 0 {
		d.startObservers(ctx, r, sched) // observe.go: before step 2's catch-up
	}
	if parts&ReversePart != 0 {
		if err := d.startReverse(ctx, r, sched); err != nil {
			return err
		}
	}
	if parts&ForwardPart != 0 {
		d.registerConnectorHooks(ctx)
		if err := d.startConnectorHooks(r); err != nil {
			return err
		}
		d.startForward(r, sched)
		d.startOrphanWatch(r)
	}
	if sched != nil {
		if err := sched.add(r); err != nil {
			return err
		}
	}
	return nil
}

// add appends services to start in step 3.
func (r *Running) add(s ...*service) { r.services = append(r.services, s...) }

// Wait waits for every part to stop, and for the passes admin requests
// started (they end with the group's context, and within the budget:
// their writes are cut at its end, then they only record the run), so
// that the state file can close. It returns the first failure; nil when
// the parts stopped because they were asked to.
func (r *Running) Wait() error {
	if r == nil {
		return nil
	}
	err := r.group.Wait()
	r.cancel()
	r.d.WaitIdle(context.Background())
	r.endStopping()
	return err
}

// Stop asks every part to stop and waits for them (see Start); Wait
// tells whether one had failed.
func (r *Running) Stop() {
	if r == nil {
		return
	}
	r.cancel()
	_ = r.Wait()
}

// budgetAfter returns a context that ends ShutdownBudget after ctx does.
func budgetAfter(ctx context.Context) (context.Context, context.CancelFunc) {
	stopping, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() {
		t := time.AfterFunc(ShutdownBudget, cancel)
		context.AfterFunc(stopping, func() { t.Stop() })
	})
	return stopping, cancel
}

// serveNow starts serving srv on ln at once, before the group starts,
// and returns the service that shuts it down (see serveHTTP). The
// webhook receiver serves so from start-up step 2: the service delivers
// the changes made while the start-up catch-up and drain run (seconds,
// half a minute under a throttled API) as they happen, each version with
// its own time; bound but not served, its deliveries timed out and came
// again only after the catch-up listing had settled them by a later
// version's time (issue 35: the poll soak's journaled losses after a
// restart). A delivery only enqueues and wakes the applier, which runs
// later (Applier.Notify does not block).
func serveNow(name string, stopping context.Context, srv *http.Server, ln net.Listener) *service {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	return &service{
		name: name,
		serve: func(ctx context.Context) error {
			return shutdownHTTP(ctx, stopping, srv, errc)
		},
		close: func() { _ = srv.Close() },
	}
}

// serveHTTP serves srv on ln until ctx ends, then shuts it down: requests
// in flight are answered until stopping ends, when the connections left
// are closed. An error means the server failed before it was asked to
// stop.
func serveHTTP(ctx, stopping context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	return shutdownHTTP(ctx, stopping, srv, errc)
}

// shutdownHTTP waits for ctx to end, then shuts srv down (see
// serveHTTP); errc carries what srv.Serve returned.
func shutdownHTTP(ctx, stopping context.Context, srv *http.Server, errc <-chan error) error {
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if err := srv.Shutdown(stopping); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// WaitIdle waits until no pass of any connector is in progress, or ctx
// ends (false). Wait calls it, so that a resync or retry started through
// the admin API (whose context ends with the daemon's) finishes its batch
// and records it before the state file closes.
func (d *Daemon) WaitIdle(ctx context.Context) bool {
	var wg sync.WaitGroup
	for _, c := range d.connectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.running.Lock()
			//lint:ignore SA2001 only waiting for the pass in progress to end
			c.running.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
