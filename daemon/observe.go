package daemon

import (
	"context"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/syncd-io/syncd/connector"
)

// observes reports whether c's polled table is read between its passes
// (reconcile.Observer): its edits flow back, and a read is one query.
func (c *Connector) observes() bool {
	p, ok := c.Source.(connector.TablePoller)
	return ok && p.PollsTable() && c.Config.Direction.WritesBack() && c.Type.Incremental
}

// startObservers starts, before start-up step 2, the observer of each
// connector that observes (observeNow).
func (d *Daemon) startObservers(ctx context.Context, r *Running, sched *schedule) {
	for _, c := range d.connectors {
		if c.observes() {
			r.add(observeNow(ctx, c, sched.trigger(c)))
		}
	}
}

// observeNow starts c's observer at once, before the group starts, and
// returns the service that stops it. An observer keeps when each value
// of a polled row changed, read before a later edit of another column
// moves the row's updated_at. Started with the forward loops only, it
// read nothing while start-up step 2 ran (the catch-up listing and the
// inbox's drain: 15 s after a restart under a throttled API), and the
// write-back weighed the rows edited meanwhile at their later updated_at
// (issue 35: the poll soak's 3 journaled losses of the hour-long run at
// 468a4df, each in the 10 s after a restart). So it reads at once (the
// rows changed while syncd was away), then on each tick of c's schedule:
// timed by itself until the scheduler starts in step 3, by the
// scheduler's trigger after.
func observeNow(ctx context.Context, c *Connector, trigger <-chan struct{}) *service {
	every, err := cron.ParseStandard(c.schedule)
	if err != nil {
		every = nil // the scheduler refuses it in step 3; until then one read
	}
	ctx, cancel := context.WithCancel(ctx)
	started, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		observeLoop(ctx, c, trigger, started, every)
	}()
	stop := func() {
		cancel()
		<-done
	}
	return &service{
		name: "observer of " + c.Name,
		serve: func(gctx context.Context) error {
			close(started)
			select {
			case <-gctx.Done():
			case <-done:
			}
			stop()
			return nil
		},
		close: stop,
	}
}

// observeLoop reads c's changes at once, then on each tick of its
// schedule (see observeNow), whatever its pass is doing; a failed read is
// left to the pass, which reads the same rows.
func observeLoop(ctx context.Context, c *Connector, trigger <-chan struct{}, started <-chan struct{}, every cron.Schedule) {
	o := c.Recon.NewObserver()
	timed := every != nil // by its own timer, until the scheduler starts
	for read := true; ; {
		if read {
			if err := o.Observe(ctx); err != nil && ctx.Err() == nil {
				c.log.WithError(err).Debug("reading changes between passes failed; the pass reads them")
			}
		}
		var tick <-chan time.Time
		if timed {
			tick = time.After(time.Until(every.Next(time.Now())))
		}
		select {
		case <-ctx.Done():
			return
		case <-trigger:
			read = true
		case <-tick:
			read = true
		case <-started:
			started, timed, read = nil, false, false // the scheduler's trigger ticks from now on
		}
	}
}
