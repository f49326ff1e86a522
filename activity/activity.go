// Package activity is syncd's third direction: the workspace's calls and
// texts, logged as activities on the records of the connectors whose
// configuration asks for it (a connector's `activities: {log: [...]}`).
//
// Events come in on the webhook listener (webhook.Receiver writes the
// call.* and message.* events it is told to take to the state's activity
// queue, durably, before it answers 2xx) and from catch-up (catchup.go),
// which enqueues what the workspace's listings show that no delivery
// brought. The Logger takes the queue oldest first:
//
//  1. merge the event into what syncd knows of its call or text (an item
//     in state: the call, its summary, transcript and recording; a later
//     event of a call fills in its item, and may come before
//     call.completed: the item is then written once the call is known);
//  2. find the records: the other party's number -> the links of each
//     connector with activities whose contact has that number (the
//     links' mapped phoneNumbers.* values) -> their records (records.go);
//  3. write one activity per (call or text, record) through the
//     connector's connector.ActivityWriter, exactly once (write.go);
//  4. remove the event from the queue once every write of it is done or
//     set aside as a dead letter; a write whose outcome is unknown, or a
//     system that cannot be reached, leaves the event for a later round.
//
// # Which record
//
// A number on several linked contacts of a connector logs the activity
// on each of their records (a shared line belongs on every record that
// has it); a contact linked to several connectors with activities gets
// one activity in each system. A number that no link of a connector
// knows (no contact has it, or its contact is not linked to that
// connector yet) is skipped for that connector and counted with
// unknownNumbers: skip; with create, the Target's Create makes a record
// for it once (create.go), the connector's forward pass links it to a
// new contact, and the event waits in the queue until then.
//
// # Privacy
//
// Transcripts and recordings go to a connector only when its log lists
// them. A message's text and a transcript never appear in syncd's logs,
// errors or dead letters: the dead letter of a refused activity names the
// call or text and the system's reason, with those values cut out.
package activity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
)

// Queue is the activity domain of the state; *state.Activities
// implements it.
type Queue interface {
	Enqueue(e state.ActivityEvent) (seq uint64, duplicate bool, err error)
	Pending(limit int) ([]state.ActivityEvent, error)
	CountPending() (int, error)
	Ack(seq uint64) error
	Attempted(seq uint64) (int, error)
	Item(key string) ([]byte, bool, error)
	PutItem(key string, raw []byte) error
	Written(connector, key string) (state.WrittenActivity, bool, error)
	Intend(connector, key, recordID string) error
	Wrote(connector, key string, w state.WrittenActivity, first bool) error
	Count(connector string, skipped, failed int64) error
	Counts(connector string) (state.ActivityCounts, error)
	Position(name string) ([]byte, error)
	SetPosition(name string, pos []byte) error
	TouchPair(key string, at time.Time) error
	Pairs(since time.Time) ([]string, error)
	PruneItems(before time.Time) (int, error)
}

var _ Queue = (*state.Activities)(nil)

// Links are the links the direction finds records by;
// *state.Links implements it.
type Links interface {
	ForEach(connector string, fn func(state.Link) error) error
}

// DeadLetters take the refused activities; *state.DeadLetters
// implements it.
type DeadLetters interface {
	Add(d state.DeadLetter) (uint64, error)
	// Delete removes a dead letter (Retry, when written again).
	Delete(id uint64) error
}

// Store is the rest of the state the direction reads and writes.
type Store struct {
	Links       Links
	DeadLetters DeadLetters
}

// StoreOf returns the Store over st.
func StoreOf(st *state.Store) Store { return Store{Links: st.Links, DeadLetters: st.DeadLetters} }

// Target is one connector that logs activities.
type Target struct {
	// Name is the connector's name.
	Name string
	// Writer writes its activities.
	Writer connector.ActivityWriter
	// Log is what its activities hold (calls, messages, summaries,
	// transcripts, recordings).
	Log []policy.ActivityLog
	// Create, when set (unknownNumbers: create), makes a record for a
	// number no link of the connector knows and returns its id; the
	// connector's forward pass then makes its contact and link, and the
	// activity is logged once the link exists.
	Create func(ctx context.Context, number string) (string, error)
}

func (t *Target) logs(k policy.ActivityLog) bool {
	for _, l := range t.Log {
		if l == k {
			return true
		}
	}
	return false
}

// Options configure a Logger.
type Options struct {
	Queue   Queue
	Store   Store
	Targets []*Target
	// Poll is how often the queue is looked at without a notification
	// (DefaultPoll when zero): events left by a failed round are retried
	// then.
	Poll time.Duration
	// Workspace, when set, is read by catch-up (catchup.go), at Run's
	// start and every CatchUpEvery (DefaultCatchUpEvery when zero);
	// WebhookURL names the subscription whose failed deliveries it asks
	// for again; Lookback (DefaultLookback) is how recent a number's
	// activity must be for its listings to be read.
	Workspace    Workspace
	WebhookURL   string
	CatchUpEvery time.Duration
	Lookback     time.Duration
	Log          *logrus.Entry
	Now          func() time.Time
}

// DefaultPoll is Options.Poll's default.
const DefaultPoll = 5 * time.Second

// ItemRetention is how long what syncd knows of a call or text (its
// values, a text's body, a transcript) stays in the state after its last
// event: a later event of an older call finds no call and writes
// nothing. What was written for it (ids and hashes, no text) stays.
const ItemRetention = 30 * 24 * time.Hour

// OperationActivity is the operation of an activity's dead letters.
const OperationActivity = "activity"

// Logger is the activity direction. Run it with Run; Notify wakes it.
type Logger struct {
	opts    Options
	log     *logrus.Entry
	wake    chan struct{}
	records *recordIndex
	// writing is held while an event is handled or a dead letter
	// retried: the two never write the same activity at once.
	writing sync.Mutex

	mu     sync.Mutex
	stats  Stats
	emails map[string]string // workspace user id -> e-mail (owner.go)
}

// Stats are the Logger's counters since it started.
type Stats struct {
	Events  int64 // events handled and removed from the queue
	Written int64 // activities created or updated
	Failed  int64 // rounds in which an event could not be finished
}

// New checks opts and returns a Logger.
func New(opts Options) (*Logger, error) {
	if opts.Queue == nil || opts.Store.Links == nil || opts.Store.DeadLetters == nil {
		return nil, errors.New("activity logger: queue and store are required")
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CatchUpEvery <= 0 {
		opts.CatchUpEvery = DefaultCatchUpEvery
	}
	if opts.Lookback <= 0 {
		opts.Lookback = DefaultLookback
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	l := &Logger{opts: opts, log: log.WithField(logfield.Component, "activity"), wake: make(chan struct{}, 1), emails: map[string]string{}}
	l.records = newRecordIndex(opts.Store.Links, opts.Now)
	return l, nil
}

// Targets returns the connectors the Logger writes to.
func (l *Logger) Targets() []*Target { return l.opts.Targets }

// Stats returns the counters.
func (l *Logger) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

// Notify wakes the Logger (an event was queued). It never blocks.
func (l *Logger) Notify() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run handles the queue until ctx ends: at once, on each Notify, and
// every Poll; after a failed round it waits Poll before trying again.
// It catches up (catchup.go) at once and every CatchUpEvery.
func (l *Logger) Run(ctx context.Context) error {
	nextCatchUp := time.Time{}
	for {
		if now := l.opts.Now(); !now.Before(nextCatchUp) {
			nextCatchUp = now.Add(l.opts.CatchUpEvery)
			if _, err := l.opts.Queue.PruneItems(now.Add(-ItemRetention)); err != nil {
				l.log.WithError(err).Warn("old calls and texts could not be pruned from the state; tried again later")
			}
			if st, err := l.CatchUp(ctx); err != nil && ctx.Err() == nil {
				l.log.WithError(err).Warn("activity catch-up failed; it runs again later")
			} else if st.Retried+st.Queued > 0 {
				l.log.WithField(logfield.Asked, st.Retried).WithField(logfield.New, st.Queued).Info("activity catch-up found missed calls or texts")
			}
		}
		if err := l.Drain(ctx); err != nil && ctx.Err() == nil {
			l.log.WithError(err).Warn("activity round left events in the queue; they are tried again")
		}
		t := time.NewTimer(l.opts.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-l.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Drain handles every queued event once, oldest first, and returns the
// first failure (the events that failed stay queued, their attempts
// counted).
func (l *Logger) Drain(ctx context.Context) error {
	evs, err := l.opts.Queue.Pending(0)
	if err != nil {
		return err
	}
	var first error
	for _, ev := range evs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		l.writing.Lock()
		err := l.handle(ctx, ev)
		l.writing.Unlock()
		if err != nil {
			if first == nil {
				first = err
			}
			l.mu.Lock()
			l.stats.Failed++
			l.mu.Unlock()
			if _, aerr := l.opts.Queue.Attempted(ev.Seq); aerr != nil {
				return aerr
			}
		}
	}
	return first
}

// handle merges one event and writes what it changes. A nil error means
// the event is done (removed from the queue).
func (l *Logger) handle(ctx context.Context, ev state.ActivityEvent) error {
	it, primary, err := l.merge(ev)
	if err != nil {
		var bad *badEvent
		if errors.As(err, &bad) {
			// Never the body: it may hold a text.
			l.log.WithField(logfield.Type, ev.Type).WithField(logfield.WebhookID, ev.ID).WithField(logfield.Reason, bad.reason).
				Warn("activity event dropped: it does not hold what its type says")
			return l.ack(ev)
		}
		return err
	}
	if !it.ready() {
		return l.ack(ev) // a summary, transcript or recording before its call: kept in the item
	}
	var first error
	for _, t := range l.opts.Targets {
		if err := l.writeTarget(ctx, t, it, primary); err != nil && (first == nil || errors.Is(first, errAwaitingLink)) {
			first = fmt.Errorf("%s %s on %s: %w", it.Kind, it.ID, t.Name, err)
		}
	}
	if errors.Is(first, errAwaitingLink) && ev.Attempts >= MaxAwaitingLink {
		l.log.WithField(logfield.Type, ev.Type).WithField(logfield.WebhookID, ev.ID).
			Warn("a record made for a number was never linked; its call or text is dropped")
		return l.ack(ev)
	}
	if first != nil {
		return first
	}
	return l.ack(ev)
}

// MaxAwaitingLink is how many rounds an event waits for the link of a
// record made for its number (unknownNumbers: create) before it is
// dropped: at DefaultPoll, five minutes.
const MaxAwaitingLink = 60

func (l *Logger) ack(ev state.ActivityEvent) error {
	if err := l.opts.Queue.Ack(ev.Seq); err != nil {
		return err
	}
	l.mu.Lock()
	l.stats.Events++
	l.mu.Unlock()
	return nil
}

// writeTarget writes the item's activity on each of t's records.
func (l *Logger) writeTarget(ctx context.Context, t *Target, it *Item, primary bool) error {
	if !t.logs(it.logKind()) {
		return nil
	}
	recs, err := l.records.lookup(t.Name, it.numbers())
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if t.Create != nil {
			return l.createRecords(ctx, t, it.numbers())
		}
		if primary {
			return l.opts.Queue.Count(t.Name, 1, 0)
		}
		return nil
	}
	var first error
	owner := l.ownerEmail(ctx, it)
	for _, r := range recs {
		a := it.activity(t, r)
		a.OwnerEmail = owner
		if err := l.write(ctx, t, a); err != nil {
			if !definite(err) {
				if first == nil {
					first = err
				}
				continue
			}
			if err := l.deadLetter(t, a, err); err != nil {
				return err
			}
		}
	}
	return first
}
