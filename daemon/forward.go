package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Backoff after a failed pass: the connector is tried again sooner than
// its schedule, waiting twice as long after each failure up to the cap.
const (
	retryBase = 5 * time.Second
	retryCap  = 5 * time.Minute
)

// schedule is the daemon's one cron scheduler: on each connector's
// schedule it pokes the triggers of the loops registered for it (its
// forward pass, its catch-up of workspace changes).
type schedule struct {
	triggers map[*Connector][]chan struct{}
	order    []*Connector
}

func newSchedule() *schedule { return &schedule{triggers: map[*Connector][]chan struct{}{}} }

// trigger returns a new trigger of c, poked on c's schedule.
func (s *schedule) trigger(c *Connector) chan struct{} {
	t := make(chan struct{}, 1)
	if _, seen := s.triggers[c]; !seen {
		s.order = append(s.order, c)
	}
	s.triggers[c] = append(s.triggers[c], t)
	return t
}

// pokeAll pokes every trigger of c now, as its schedule would.
func (s *schedule) pokeAll(c *Connector) {
	for _, t := range s.triggers[c] {
		poke(t)
	}
}

// add adds the scheduler to r's services, when any loop needs it.
func (s *schedule) add(r *Running) error {
	if len(s.order) == 0 {
		return nil
	}
	sched := cron.New(cron.WithLogger(cron.DiscardLogger))
	for _, c := range s.order {
		ts := s.triggers[c]
		if _, err := sched.AddFunc(c.schedule, func() {
			for _, t := range ts {
				poke(t)
			}
		}); err != nil {
			return err
		}
	}
	r.add(&service{name: "scheduler", serve: func(ctx context.Context) error {
		sched.Start()
		<-ctx.Done()
		<-sched.Stop().Done()
		return nil
	}})
	return nil
}

// poke sends a trigger unless one is already waiting.
func poke(trigger chan struct{}) {
	select {
	case trigger <- struct{}{}:
	default:
	}
}

// startForward adds one forward loop per connector: a pass at once, then
// one on each tick of its schedule (never two passes of one connector at
// once). A pass in flight when the daemon stops finishes its batch and
// records its state before its loop returns.
func (d *Daemon) startForward(r *Running, sched *schedule) {
	for _, c := range d.connectors {
		trigger := sched.trigger(c)
		c.forward.Store(&trigger)
		r.add(&service{name: "forward loop of " + c.Name, serve: func(ctx context.Context) error {
			d.loop(ctx, c, trigger)
			return nil
		}})
		if n, ok := c.Source.(connector.ChangeNotifier); ok {
			r.add(&service{name: "change notifications of " + c.Name, serve: func(ctx context.Context) error {
				notifyLoop(ctx, c, n, trigger)
				return nil
			}})
		}
	}
}

// notifyLoop pokes c's forward trigger whenever its source says it has
// changes: the pass starts at once, and a burst of notifications while a
// pass runs makes one more pass, not one each (the trigger holds one).
// When the source stops notifying with an error, it is started again
// after a capped backoff; the schedule runs meanwhile.
func notifyLoop(ctx context.Context, c *Connector, n connector.ChangeNotifier, trigger chan struct{}) {
	failures := 0
	for {
		err := n.NotifyChanges(ctx, func() { poke(trigger) })
		if ctx.Err() != nil {
			return
		}
		failures++
		wait := min(retryBase<<min(failures-1, 16), retryCap)
		c.log.WithError(err).WithField(logfield.Mode, n.NotifyMode()).WithField(logfield.RetryIn, wait.String()).
			Warn("change notifications stopped; the schedule still runs")
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// loop is one connector's long-running loop: a select over ctx.Done(),
// its schedule's trigger and, after a failure, a capped exponential
// backoff timer. A pass stopped at its API budget is no failure: the
// next one waits for the schedule, as its log line says.
func (d *Daemon) loop(ctx context.Context, c *Connector, trigger <-chan struct{}) {
	failures := 0
	var retry <-chan time.Time
	for {
		_, err := c.RunOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !errors.Is(err, ErrBusy) && !errors.Is(err, connector.ErrBudgetSpent):
			failures++
			wait := min(retryBase<<min(failures-1, 16), retryCap)
			c.log.WithField(logfield.RetryIn, wait.String()).WithField(logfield.Failures, failures).Warn("pass failed; retrying with backoff")
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
