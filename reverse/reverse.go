// Package reverse is syncd's reverse direction: it applies the workspace
// events the webhook receiver wrote to the state's inbox to the other
// systems, through each connector's Writer.
//
// # Rounds
//
// The applier works in rounds. A round reads up to BatchSize events from
// the inbox, oldest first, groups them by contact and keeps, per contact,
// the newest version (the one with the latest updatedAt; a deletion
// supersedes every update). Every event carries the whole contact, so
// applying only the newest version is applying them all in order. A
// version older than what was already applied for the contact
// (Link.ContactUpdatedAt) is dropped. A version as old as the applied one
// is compared all the same: the echo of a forward write carries the
// applied updatedAt, and the whole contact, which may hold workspace
// changes the forward write did not touch. One goroutine runs the rounds, so two
// versions of one contact never race, and each connector gets one Write
// call per round with all its changes (HubSpot's connector groups them
// into batch calls of 100).
//
// # Echoes, conflicts and what is written
//
// A contact belongs to the connector that has a link to it (looked up by
// contact id); the mapping gives its values for the targets that flow
// back (direction both or to-crm). When they equal the values last agreed
// with the other system (Link.Fields, plus the reverse-only values kept
// beside the link), the event is syncd's own echo, or a change of fields
// that do not flow back: nothing is written. Otherwise, when the connector
// can read records by id (connector.Getter), the record is read: fields
// it already holds are not written again (a forward pass racing with the
// echo of its own write costs nothing), and fields both sides changed
// since the last sync to different values are a conflict that the
// connector's policy settles (newest-wins by updatedAt, workspace-wins,
// crm-wins), the losing values going to the conflict journal. Without a
// Getter the record is taken as unchanged since the last sync.
//
// # Crash safety
//
// The write into the other system comes first; then one state
// transaction stores the new link (Fields, hashes, ContactUpdatedAt set to
// the applied version, so that the forward pass reading the changed
// record sees its own values and writes nothing) and removes the events
// from the inbox. A crash in between leaves the events in the inbox; the
// next round reads the record, finds the values already there, and only
// records the link: every acknowledged event takes effect exactly once.
//
// Contacts created in the workspace's app are created in the other system
// (onWorkspaceCreate: create) behind a pending-create marker written
// before the create; see create.go for the residual risk.
package reverse

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// Defaults of Options.
const (
	DefaultBatchSize   = 500
	DefaultMaxAttempts = 5
	DefaultMaxPutOffs  = 10
	DefaultIdlePoll    = 5 * time.Second
	deferPoll          = 250 * time.Millisecond
	minBackoff         = 100 * time.Millisecond
	maxBackoff         = 30 * time.Second
)

// Workspace is the part of the workspace API the applier uses;
// *workspace.Client implements it.
type Workspace interface {
	UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error)
	Contacts(ctx context.Context, p workspace.ListContactsParams) iter.Seq2[workspace.Contact, error]
}

var _ Workspace = (*workspace.Client)(nil)

// Target is one connector that acts on workspace changes.
type Target struct {
	// Name is the connector's name (its links' key).
	Name string
	// Source is the workspace source of its contacts.
	Source string
	// Mapper is its mapping.
	Mapper *mapping.Mapper
	// Writer writes into its system; nil for a read-only connector (only
	// ignore and unlink policies apply then).
	Writer connector.Writer
	// Getter reads records by id; nil makes the applier take the record
	// as unchanged since the last sync. Default: Writer, when it is one.
	Getter connector.Getter
	// Direction is the connector's direction: updates flow back only with
	// both or to-crm.
	Direction policy.Direction
	// Conflict is newest-wins (default), workspace-wins or crm-wins.
	Conflict policy.Conflict
	// OnWorkspaceCreate is ignore (default) or create; OnWorkspaceDelete
	// is ignore (default), unlink or delete.
	OnWorkspaceCreate policy.Create
	OnWorkspaceDelete policy.Delete
	// EditAfterDelete settles a contact deleted in the workspace whose
	// record was edited after the deletion (see deleteafteredit.go);
	// "" is edit-wins.
	EditAfterDelete policy.EditAfterDelete
	// SoftDelete asks deletes to mark records deleted where the system
	// has a soft-delete column.
	SoftDelete bool
	// StagesCreates is the connector's connector.Type.StagesCreates: a
	// create whose id was not staged was never applied (create.go).
	StagesCreates bool
	// MassDeleteThreshold is the share of its links whose records the
	// connector's write-back may delete within DeleteWindow (default
	// 0.10; 1 turns the guard off); AllowMassDelete lifts it. See
	// massdelete.go.
	MassDeleteThreshold float64
	AllowMassDelete     bool
	// Streams, when set, reports whether the connector's forward
	// direction reads a change stream now (a replication slot, a binlog):
	// it has every version of a row, and each field's own edit time
	// (deferToStream).
	Streams func() bool
	// Lock, when set, is held while the connector's changes of a round
	// are read, written and recorded. The daemon gives the connector's
	// reconcile.Guard, which its forward runs take batch by batch, so
	// that a pass never reads a record written back but not yet recorded
	// in its link (it would take the write-back for a change of the
	// record and send it to the workspace, over any newer version still
	// on its way); the daemon also gives the Writer through the guard, so
	// that a run reads again the records written back while it goes on.
	Lock sync.Locker
	// Revisited, when set, is called after a round asked the forward
	// direction to read records of the connector again (state.Revisit),
	// so that its next pass comes now.
	Revisited func()
}

func (t *Target) writesBack() bool {
	return t.Writer != nil && t.Direction.WritesBack()
}

// DefaultGather is the default of Options.Gather.
const DefaultGather = 150 * time.Millisecond

// Options configure an Applier.
type Options struct {
	Store     Store
	Workspace Workspace
	Targets   []*Target
	// BatchSize is the number of inbox events one round reads.
	BatchSize int
	// MaxAttempts bounds the rounds in which one contact's write may fail
	// on its own before its events are set aside as a dead letter.
	MaxAttempts int
	// MaxPutOffs bounds the rounds in which one contact's write-back may
	// be put off because its record changed since it was read
	// (connector.ErrChanged) before its events are set aside as a dead
	// letter (Stats.PutOffDeadLetters). Default DefaultMaxPutOffs.
	MaxPutOffs int
	// IdlePoll is how often an idle applier looks at the inbox without
	// being notified.
	IdlePoll time.Duration
	// Gather is how long an idle applier waits, once notified of a new
	// event, before its round: events that arrive together (a person
	// editing several contacts, a burst of deliveries) then go out in one
	// Write call per connector, which HubSpot's batch endpoints and rate
	// limits reward. Default DefaultGather; negative means none.
	Gather time.Duration
	Log    *logrus.Entry
	Now    func() time.Time
}

// Stats counts what the applier did since it started.
type Stats struct {
	Rounds    int64 // rounds that read at least one event
	Events    int64 // events acknowledged
	Written   int64 // records updated in another system
	Created   int64 // records created for contacts made in the workspace
	Deleted   int64 // records deleted after a workspace deletion
	Unlinked  int64 // links dropped after a workspace deletion
	Echoes    int64 // versions equal to what was last agreed: nothing written
	Unchanged int64 // versions whose values the record already held
	Stale     int64 // versions not newer than the one applied
	Conflicts int64 // conflicts settled by policy
	Ignored   int64 // events no connector acts on
	Failed    int64 // contacts set aside as dead letters
	Retried   int64 // contacts whose write failed and stays in the inbox
	// PutOffs counts write-backs put off because the record changed
	// since it was read; PutOffDeadLetters the contacts set aside after
	// MaxPutOffs of them (also counted in Failed).
	PutOffs           int64
	PutOffDeadLetters int64
	// HeldDeletes counts record deletions held by the mass-delete guard.
	HeldDeletes int64
}

// Applier applies inbox events. Run it in one goroutine; Notify, Stats
// and CatchUp are safe to call from others.
type Applier struct {
	opts    Options
	log     *logrus.Entry
	wake    chan struct{}
	targets map[string]*Target

	mu    sync.Mutex
	stats Stats
	// deletes are the times of each connector's record deletions within
	// DeleteWindow (massdelete.go).
	deletes map[string][]time.Time

	idle atomic.Bool
}

// New checks opts and returns an Applier.
func New(opts Options) (*Applier, error) {
	if !opts.Store.complete() || opts.Workspace == nil {
		return nil, errors.New("reverse: store and workspace are required")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.MaxPutOffs <= 0 {
		opts.MaxPutOffs = DefaultMaxPutOffs
	}
	if opts.Gather == 0 {
		opts.Gather = DefaultGather
	}
	if opts.IdlePoll <= 0 {
		opts.IdlePoll = DefaultIdlePoll
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	a := &Applier{opts: opts, log: log.WithField(logfield.Component, "reverse"), wake: make(chan struct{}, 1), targets: map[string]*Target{}, deletes: map[string][]time.Time{}}
	for _, t := range opts.Targets {
		if t.Name == "" || t.Source == "" || t.Mapper == nil {
			return nil, errors.New("reverse: every target needs a name, a source and a mapper")
		}
		if _, dup := a.targets[t.Name]; dup {
			return nil, errors.New("reverse: target " + t.Name + " given twice")
		}
		if t.Getter == nil {
			t.Getter, _ = t.Writer.(connector.Getter)
		}
		if t.Conflict == "" {
			t.Conflict = policy.NewestWins
		}
		a.targets[t.Name] = t
	}
	return a, nil
}

// Notify wakes the applier (the receiver calls it after each event).
func (a *Applier) Notify() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Stats returns a copy of the counters.
func (a *Applier) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}

func (a *Applier) count(f func(s *Stats)) {
	a.mu.Lock()
	f(&a.stats)
	a.mu.Unlock()
}

// Idle reports whether the applier's last round found the inbox empty
// and nothing left to retry, and no round goes on.
func (a *Applier) Idle() bool { return a.idle.Load() }

// Run applies events until ctx is done: a round as soon as events come
// (Notify) or every IdlePoll, rounds back to back while the inbox is
// full, and a capped exponential backoff while writes keep failing.
func (a *Applier) Run(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		a.idle.Store(false) // not idle while a round goes on
		res, err := a.Round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		switch {
		case err != nil || res.Retry > 0:
			backoff = min(max(backoff*2, minBackoff), maxBackoff)
			wait = backoff
			if err != nil {
				a.log.WithError(err).WithField(logfield.RetryIn, wait.String()).Warn("reverse round failed")
			}
		case res.Deferred > 0:
			// Conflicts left to the forward pass: looked at again soon,
			// without a backoff (nothing failed).
			backoff = 0
			wait = min(a.opts.IdlePoll, deferPoll)
		case res.Read >= a.opts.BatchSize:
			backoff = 0
			continue // more waiting in the inbox
		default:
			backoff = 0
			wait = a.opts.IdlePoll
		}
		a.idle.Store(err == nil && res.Retry == 0 && res.Deferred == 0 && res.Read < a.opts.BatchSize)
		if backoff == 0 && a.woken() {
			// Events came while the round ran: a stream, whose next round
			// starts at once and takes them all (gathering would only add
			// to every event's delay).
			continue
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-a.wake:
			// The applier waited idle and was woken: the first event of a
			// burst (a person editing several contacts). Gather, as
			// Options.Gather says, so that the burst goes out together.
			if backoff == 0 && a.opts.Gather > 0 {
				gather := time.NewTimer(a.opts.Gather)
				select {
				case <-ctx.Done():
					gather.Stop()
					timer.Stop()
					return nil
				case <-gather.C:
				}
			}
			if backoff > 0 {
				// Failing: new events do not shorten the backoff.
				select {
				case <-ctx.Done():
					timer.Stop()
					return nil
				case <-timer.C:
				}
			}
		case <-timer.C:
		}
		timer.Stop()
	}
}

// woken reports, without waiting, whether Notify was called since the
// applier last looked (and takes that notice).
func (a *Applier) woken() bool {
	select {
	case <-a.wake:
		return true
	default:
		return false
	}
}

// Drain runs rounds until the inbox is empty, a round fails, or events
// are left to retry (for `run --once` and tests).
func (a *Applier) Drain(ctx context.Context) error {
	for {
		res, err := a.Round(ctx)
		if err != nil {
			return err
		}
		if res.Read == 0 || res.Retry > 0 || res.Deferred > 0 {
			return nil
		}
	}
}
