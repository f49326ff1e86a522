// Package reconcile is syncd's forward direction: it turns the records a
// connector reads into workspace contacts keyed by (source, externalId),
// exactly once and with no wasted call.
//
// For each batch of records it maps every record, compares the hash of the
// mapped values with the link kept in state, and then skips the record (no
// call), patches only the fields that changed, or creates the contact.
// Before any create it looks the externalIds up in the workspace, so that a
// lost state file or an earlier crash never produces a duplicate; a create
// whose answer was lost is resolved by the same look-up before any retry.
//
// On a connector whose app edits flow back, a patch never overwrites an
// app edit syncd has not weighed: the contact's edits waiting in the
// inbox are settled by the conflict policy before the patch, and those
// that came while it was in flight after it (appedits.go); an edit on one
// side after a delete on the other follows editAfterDelete
// (editafterdelete.go).
//
// A pass (pass.go) leads each batch through stages, each a type with its
// own few fields and the few store methods it calls: guard (take the
// Guard, read again what the write-back wrote meanwhile), skip unchanged
// (a record whose fingerprint its link holds costs no mapping), map
// (records to items; twins refused; stale copies read again), merge
// (contacts of merged records move to the survivor), link (each item's
// link), match (externalIds looked up, phone and e-mail matched), re-key
// guard, write (writer: patch, create, adopt or link, with retries), and
// settle (deleter: what is gone at the source). All count into one tally
// and set records aside through one set of dead letters; the pass keeps
// only what ties them together.
//
// Crash safety follows the state package's rule: the remote write first,
// then the link that records it, then (once every record of a batch is
// written or set aside as a dead letter) the batch's checkpoint. A restart
// repeats at most one batch, and the repeat finds links or existing
// contacts instead of creating again.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/workspace"
)

// Workspace is the part of the workspace API the reconciler uses;
// *workspace.Client implements it.
type Workspace interface {
	CreateContact(ctx context.Context, in workspace.ContactCreate) (workspace.Contact, error)
	UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error)
	DeleteContact(ctx context.Context, id string) error
	ContactsByExternalIDs(ctx context.Context, source string, externalIDs []string) ([]workspace.Contact, error)
	Contacts(ctx context.Context, p workspace.ListContactsParams) iter.Seq2[workspace.Contact, error]
	Calls() int64
}

var _ Workspace = (*workspace.Client)(nil)

// ErrMassDelete is returned when a run would delete more of a connector's
// linked contacts than its threshold allows.
var ErrMassDelete = errors.New("mass delete refused")

// Options configure a Reconciler for one connector.
type Options struct {
	// Connector is the connector's name (the key of its links in state).
	Connector string
	// Source is the workspace `source` of the connector's contacts.
	Source string
	// Type is the connector's registered type.
	Type connector.Type
	// Reader reads the connector's records.
	Reader connector.Source
	// Mapper maps records to contacts.
	Mapper *mapping.Mapper
	// Store is syncd's state.
	Store Store
	// Workspace is the workspace API.
	Workspace Workspace
	// Workers is how many records are written at once (default 4); they
	// all share the workspace client's rate limiter.
	Workers int
	// OnSourceDelete is ignore (default), unlink or delete.
	OnSourceDelete policy.Delete
	// MassDeleteThreshold is the share of linked contacts one run may
	// delete (default 0.10).
	MassDeleteThreshold float64
	// AllowMassDelete lifts the threshold for this reconciler's runs.
	AllowMassDelete bool
	// MassRekeyThreshold is the share of linked contacts a pass may
	// create while as many linked records vanish (default 0.10); see
	// rekey.go.
	MassRekeyThreshold float64
	// AllowMassRekey lets such a pass go on, each new record taking over
	// the contact of a vanished one with the same phone or e-mail.
	AllowMassRekey bool
	// Match lists what identifies a person across systems (phone, email)
	// for adopting existing contacts at the first sync or a resync;
	// empty means by externalId only.
	Match []string
	// OnMatch is adopt (default), link or create.
	OnMatch policy.OnMatch
	// OnAmbiguous is hold (default) or create.
	OnAmbiguous policy.OnAmbiguous
	// OnWorkspaceDelete is the connector's onWorkspaceDelete when it reads
	// the workspace (direction both or to-crm), else "". With "delete", a
	// linked contact found deleted in the workspace has its record deleted
	// instead of being created again.
	OnWorkspaceDelete policy.Delete
	// Conflict is the connector's conflict policy (newest-wins default).
	Conflict policy.Conflict
	// WeighAppEdits is set when the connector's app edits flow back
	// (direction both or to-crm): before patching a linked contact, a
	// pass weighs the app edits of it waiting in the inbox, settling a
	// field both sides changed by Conflict (see appedits.go).
	WeighAppEdits bool
	// EditAfterDelete settles an edit made on one side after a delete on
	// the other ("" is edit-wins; see editafterdelete.go).
	EditAfterDelete policy.EditAfterDelete
	// OtherSources are the workspace sources of the other connectors:
	// contacts carrying them are never adopted.
	OtherSources []string
	// MaxAttempts bounds the tries of one transient write before it is set
	// aside as a dead letter (default 4).
	MaxAttempts int
	// Backoff is the first wait between tries (default 200ms, doubling).
	Backoff time.Duration
	// Guard, when set, is shared with the connector's write-back: see
	// Guard for what it keeps apart.
	Guard *Guard
	// Drain is how long the writes of the batch in flight may go on after
	// ctx is cancelled (the first SIGTERM) before they are cut short, so
	// that the batch finishes and its links and checkpoint are saved;
	// 0 cuts them at once.
	Drain time.Duration
	// Log is the connector's logger.
	Log *logrus.Entry
	// Progress, when set, follows each pass (see progress.go).
	Progress *progress.Tracker
	// Now is the clock (tests).
	Now func() time.Time
	// Written, when set, is told of each contact a pass created or
	// updated, with how long before (by Now) its record changed at the
	// source; records without UpdatedAt are not told
	// (syncd_forward_latency_seconds).
	Written func(latency time.Duration)
}

// Reconciler runs the forward sync of one connector. Its Run and Resync
// must not be called concurrently (the daemon serialises them).
type Reconciler struct {
	opts    Options
	log     *logrus.Entry
	makings makings // the records whose contact a pass is making (making.go)
}

// New checks opts and returns a Reconciler.
func New(opts Options) (*Reconciler, error) {
	switch {
	case opts.Connector == "":
		return nil, errors.New("reconcile: connector name is required")
	case opts.Source == "":
		return nil, errors.New("reconcile: workspace source is required")
	case opts.Reader == nil || opts.Mapper == nil || !opts.Store.complete() || opts.Workspace == nil:
		return nil, errors.New("reconcile: reader, mapper, store and workspace are required")
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.OnSourceDelete == "" {
		opts.OnSourceDelete = policy.DeleteIgnore
	}
	if opts.MassDeleteThreshold <= 0 {
		opts.MassDeleteThreshold = 0.10
	}
	if opts.MassRekeyThreshold <= 0 {
		opts.MassRekeyThreshold = 0.10
	}
	if opts.OnMatch == "" {
		opts.OnMatch = policy.MatchAdopt
	}
	if opts.OnAmbiguous == "" {
		opts.OnAmbiguous = policy.AmbiguousHold
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	return &Reconciler{opts: opts, log: log.WithField(logfield.Connector, opts.Connector)}, nil
}

// Summary counts what one run did.
type Summary struct {
	Connector string
	Kind      string // run or resync
	Created   int
	Updated   int
	Unchanged int
	Deleted   int
	Unlinked  int
	Relinked  int // links rebuilt from the workspace listing
	Adopted   int // existing contacts matched by phone or e-mail and taken over (or linked)
	Held      int // records whose match was ambiguous, kept for an operator
	Failed    int // records set aside as dead letters (or skipped as known failures)
	APICalls  int64
	Duration  time.Duration
	// Stopped is state.StoppedBudget when the pass ended at the
	// connector's API budget (connector.ErrBudgetSpent); "" otherwise.
	Stopped string
}

func (s Summary) String() string {
	return fmt.Sprintf("created=%d updated=%d unchanged=%d deleted=%d unlinked=%d relinked=%d adopted=%d held=%d failed=%d api_calls=%d duration=%s",
		s.Created, s.Updated, s.Unchanged, s.Deleted, s.Unlinked, s.Relinked, s.Adopted, s.Held, s.Failed, s.APICalls, s.Duration.Round(time.Millisecond))
}

// Fields returns the summary as log fields.
func (s Summary) Fields() logrus.Fields {
	f := logrus.Fields{
		logfield.Connector: s.Connector, logfield.Kind: s.Kind,
		logfield.Created: s.Created, logfield.Updated: s.Updated, logfield.Unchanged: s.Unchanged,
		logfield.Deleted: s.Deleted, logfield.Unlinked: s.Unlinked, logfield.Relinked: s.Relinked,
		logfield.Adopted: s.Adopted, logfield.Held: s.Held,
		logfield.Failed: s.Failed, logfield.APICalls: s.APICalls, logfield.Duration: s.Duration.Round(time.Millisecond).String(),
	}
	if s.Stopped != "" {
		f["stopped"] = s.Stopped
	}
	return f
}

// Writes returns the summary's writes by kind, as progress shows them.
func (s Summary) Writes() map[string]int64 {
	return map[string]int64{
		"created": int64(s.Created), "updated": int64(s.Updated), "unchanged": int64(s.Unchanged),
		"deleted": int64(s.Deleted), "unlinked": int64(s.Unlinked), "adopted": int64(s.Adopted),
		"held": int64(s.Held), "failed": int64(s.Failed),
	}
}
