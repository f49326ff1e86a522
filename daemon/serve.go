package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Backoff after a failed pass: the connector is tried again sooner than
// its schedule, waiting twice as long after each failure up to the cap.
const (
	retryBase = 5 * time.Second
	retryCap  = 5 * time.Minute
)

// Serve runs every connector once at start and then on its schedule
// (never two passes of one connector at once) until ctx is done. A pass
// in flight when ctx is cancelled finishes its batch and records its
// state before Serve returns.
func (d *Daemon) Serve(ctx context.Context) error {
	sched := cron.New(cron.WithLogger(cron.DiscardLogger))
	var wg sync.WaitGroup
	for _, c := range d.connectors {
		trigger := make(chan struct{}, 1)
		if _, err := sched.AddFunc(c.schedule, func() { poke(trigger) }); err != nil {
			return err
		}
		c.trigger = trigger
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.loop(ctx, c, trigger)
		}()
	}
	sched.Start()
	<-ctx.Done()
	<-sched.Stop().Done()
	wg.Wait()
	d.log.Info("all connectors stopped")
	return nil
}

// poke sends a trigger unless one is already waiting.
func poke(trigger chan struct{}) {
	select {
	case trigger <- struct{}{}:
	default:
	}
}

// Trigger asks the connector's loop for a pass now; it reports false when
// the daemon is not serving.
func (c *Connector) Trigger() bool {
	if c.trigger == nil {
		return false
	}
	poke(c.trigger)
	return true
}

// loop is one connector's long-running loop: a select over ctx.Done(),
// its schedule's trigger and, after a failure, a capped exponential
// backoff timer.
func (d *Daemon) loop(ctx context.Context, c *Connector, trigger <-chan struct{}) {
	failures := 0
	var retry <-chan time.Time
	for {
		_, err := c.RunOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !errors.Is(err, ErrBusy):
			failures++
			wait := min(retryBase<<min(failures-1, 16), retryCap)
			c.log.WithField("retry_in", wait.String()).WithField("failures", failures).Warn("pass failed; retrying with backoff")
			retry = time.After(wait)
		default:
			failures, retry = 0, nil
		}
		select {
		case <-ctx.Done():
			return
		case <-trigger:
		case <-retry:
		}
	}
}
