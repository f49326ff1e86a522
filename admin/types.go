package admin

import (
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// Status is the answer of GET /status: what a running daemon (or, with
// no daemon, the state file) says about every connector.
type Status struct {
	Version string `json:"version"`
	// StartedAt is when the daemon started; zero when the status was read
	// from the state file with no daemon running.
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Live is true when a running daemon answered.
	Live  bool      `json:"live"`
	State StateInfo `json:"state"`
	// Connectors are in configuration order.
	Connectors []ConnectorStatus `json:"connectors"`
	// DeadLetters and Conflicts are totals over every connector.
	DeadLetters int `json:"deadLetters"`
	Conflicts   int `json:"conflicts"`
	// FieldWarnings counts the record values left out of their
	// contacts (see FieldWarning), over every connector.
	FieldWarnings int `json:"fieldWarnings"`
	// InboxPending counts webhook events accepted but not yet applied.
	InboxPending int `json:"inboxPending"`
	// ActivitiesPending counts call and message events not handled yet:
	// one queue for every connector with activities (an event's
	// connectors are known only once it is handled), so it is a total,
	// not a connector's figure.
	ActivitiesPending int `json:"activitiesPending"`
	// Webhooks is the receiver's address, "" when none listens.
	Webhooks string `json:"webhooks,omitempty"`
	// Rates are the API rate limiters that met 429s (live daemons only):
	// the rate each adapted to and its configured ceiling.
	Rates []remote.RateStatus `json:"rates,omitempty"`
	// ReplicationOrphans are the replication slots (and publications) of
	// syncd's that no configured connector uses, as last looked at.
	ReplicationOrphans []ReplicationOrphan `json:"replicationOrphans,omitempty"`
}

// ReplicationOrphan is a PostgreSQL replication slot of syncd's (its
// name contains syncd), or a publication, on the database of a
// configured postgres connector, that no configured connector uses: a
// removed or renamed connector's, or one now set to changes: poll. A
// slot holds WAL on the server until it is dropped.
type ReplicationOrphan struct {
	// Database is host:port/dbname.
	Database string `json:"database"`
	// Slot and Publication name what exists (a publication is named like
	// its slot); either may be empty.
	Slot        string `json:"slot,omitempty"`
	Publication string `json:"publication,omitempty"`
	// HeldBytes is the WAL the slot keeps on the server.
	HeldBytes int64 `json:"heldBytes"`
	// Held is HeldBytes for people (12 kB, 3.4 MB).
	Held string `json:"held"`
	// Active is true while a process streams from the slot.
	Active    bool   `json:"active"`
	WALStatus string `json:"walStatus,omitempty"`
	// Drop is the command that drops it.
	Drop string `json:"drop"`
}

// String says what the orphan is and holds, without the command.
func (o ReplicationOrphan) String() string {
	if o.Slot == "" {
		return fmt.Sprintf("publication %s on %s is used by no configured connector", o.Publication, o.Database)
	}
	s := fmt.Sprintf("replication slot %s on %s holds %s of WAL", o.Slot, o.Database, o.Held)
	if o.WALStatus != "" && o.WALStatus != "reserved" {
		s += " (wal_status " + o.WALStatus + ")"
	}
	if o.Publication != "" {
		s += ", with publication " + o.Publication + ","
	}
	s += " and no configured connector uses it"
	if o.Active {
		s += " (a process streams from it now)"
	}
	return s
}

// StateInfo describes the state file.
type StateInfo struct {
	Path          string `json:"path"`
	SchemaVersion int    `json:"schemaVersion"`
}

// ConnectorStatus is one connector's part of Status.
type ConnectorStatus struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Source    string `json:"source"`
	Direction string `json:"direction"`
	Schedule  string `json:"schedule"`
	// Mode says how the running daemon learns of the connector's changes:
	// "poll every 5m", "file watch + poll every 5m", "webhooks + poll
	// every 1h"; empty when no daemon runs.
	Mode string `json:"mode,omitempty"`
	// Notice is what the running daemon did by itself that the operator
	// should know, such as the resync that followed a change position
	// the source lost (a purged binlog); empty when nothing.
	Notice string `json:"notice,omitempty"`
	// Running is true while a pass of the connector is in progress.
	Running bool `json:"running"`
	// Progress is the running pass's progress (done, total, ETA...), when
	// this process runs it.
	Progress *progress.Snapshot `json:"progress,omitempty"`
	// LastRun is the newest pass in the run history, finished or not.
	LastRun *Run `json:"lastRun,omitempty"`
	// LastSuccess is when the newest pass that ended without error
	// finished (looked for among the recent history).
	LastSuccess time.Time `json:"lastSuccess,omitzero"`
	// Checkpoints are the connector's cursors by name ("" is the main one).
	Checkpoints map[string]string `json:"checkpoints,omitempty"`
	// LastResult sums up LastRun: "ok", "error", "budget" (stopped at
	// the connector's API budget; the next pass resumes it), "running"
	// or "interrupted" (unfinished, its process gone); "" before any run.
	LastResult string `json:"lastResult,omitempty"`
	// Links are the records in sync.
	Links       int `json:"links"`
	DeadLetters int `json:"deadLetters"`
	Conflicts   int `json:"conflicts"`
	// FieldWarnings counts the connector's record values left out of
	// their contacts.
	FieldWarnings int `json:"fieldWarnings"`
	// Quotas are the API allowances of the connector's system as its
	// last answers said (live daemons only, connectors that report one).
	Quotas []Quota `json:"quotas,omitempty"`
	// RefusedDelete is the mass delete the guard refused, standing until
	// a full pass goes through; nil when none stands.
	RefusedDelete *RefusedDelete `json:"refusedDelete,omitempty"`
	// Activities are the connector's calls and texts logged on its
	// records (issue 33); nil when its activities log nothing.
	Activities *ActivityStatus `json:"activities,omitempty"`
}

// ActivityStatus is what a connector logged of the workspace's calls and
// texts since the state file was made.
type ActivityStatus struct {
	// Logged counts activities created, Updated later writes of them
	// (a summary, a transcript), Skipped calls and texts with a number no
	// link knows, Failed refusals (dead letters of operation activity).
	Logged  int64 `json:"logged"`
	Updated int64 `json:"updated"`
	Skipped int64 `json:"skipped"`
	Failed  int64 `json:"failed"`
}

// RefusedDelete is a mass delete the guard refused (a TRUNCATE, a source
// emptied by mistake): the contacts are still there, and stay until the
// operator acts.
type RefusedDelete struct {
	state.RefusedDelete
	// Command lets the deletions go once the source is checked (a resync
	// with --allow-mass-delete).
	Command string `json:"command"`
	// Undo is the resync that clears it once the records are back.
	Undo string `json:"undo"`
}

// Quota is one API allowance of a connector's system.
type Quota struct {
	connector.Quota
	// Remaining is what syncd may still spend (of its budget when it
	// keeps one, else of the limit); -1 when the limit is unknown.
	Remaining int64 `json:"remaining"`
}

// NewQuota returns q with its Remaining figure.
func NewQuota(q connector.Quota) Quota { return Quota{Quota: q, Remaining: q.Remaining()} }

// Result sums up a run as ConnectorStatus.LastResult does, for a run
// that is not in progress.
func (r Run) Result() string {
	switch {
	case r.FinishedAt.IsZero():
		return "interrupted"
	case r.Stopped == state.StoppedBudget:
		return "budget"
	case r.Err != "":
		return "error"
	}
	return "ok"
}

// Run is one pass from the run history, with its ID.
type Run struct {
	ID uint64 `json:"id"`
	state.Run
}

// Duration is how long the pass took (or has taken so far).
func (r Run) Duration(now time.Time) time.Duration {
	end := r.FinishedAt
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.StartedAt)
}

// DeadLetter is a record set aside, as GET /deadletters lists it (its
// payload, the record itself, is left out).
type DeadLetter struct {
	ID uint64 `json:"id"`
	state.DeadLetter
}

// FieldWarning is a record value left out of its contact (a phone number
// that is not one) so that the rest of the record synced, as GET
// /fieldwarnings lists it. It stands until the value is fixed at the
// source or the record is gone.
type FieldWarning struct {
	state.FieldWarning
}

// Conflict is one entry of the conflict journal, with its ID.
type Conflict struct {
	ID uint64 `json:"id"`
	state.Conflict
}

// Check is one readiness check.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Readiness is the answer of GET /readyz.
type Readiness struct {
	Ready  bool    `json:"ready"`
	Checks []Check `json:"checks"`
}

// RetryResponse is the answer of POST /deadletters/{id}/retry.
type RetryResponse struct {
	Summary reconcile.Summary `json:"summary"`
	// Resolved is true when the record went through and its dead letter
	// is gone; false when it failed again (the letter holds the new
	// reason).
	Resolved bool   `json:"resolved"`
	Error    string `json:"error,omitempty"`
}
