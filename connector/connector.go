// Package connector defines how syncd reads records from, and writes them
// back to, the systems a company keeps its customers in (CSV exports,
// PostgreSQL tables, CRMs). Each system is a subpackage that registers a
// Type from its init function; the daemon imports the subpackages for
// their side effect and opens connectors by type name.
//
// A connector knows nothing of the workspace or of the mapping: it moves
// records (named fields of the other system) and checkpoints. The
// reconciler maps records to contacts and decides what to write.
package connector

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// Record is one row, object or line of the other system.
type Record struct {
	// ID is the record's primary key in its own system (a PostgreSQL id
	// column, a HubSpot hs_object_id, a CSV row's id column). Write-back
	// addresses records by it. It is never empty.
	ID string
	// Fields holds the record's values by field name. Values are string,
	// int64, float64, bool, time.Time, []string or nil.
	Fields map[string]any
	// UpdatedAt is when the record last changed in its system; zero when
	// the system keeps no such time (CSV).
	UpdatedAt time.Time
	// FieldsAt, where a change stream tells, is when the record came to
	// hold its current value of a field: the UpdatedAt of the oldest of
	// the consecutive versions streamed that hold it, for the fields whose
	// value is older than UpdatedAt. One updated_at per row moves with
	// every column's edit; a conflict is weighed with each field's own
	// time. Nil for a record read whole (a poll, a snapshot, a Get).
	FieldsAt map[string]time.Time `json:",omitempty"`
	// Unsettled are the fields of a record read again in place of a
	// change stream's older copy of it (the row as it is now) whose
	// values changed after that copy: the versions that made them are
	// still to come in the stream, with their own times, unknown until
	// then. Set by the reconciler; nil for a record as a connector reads
	// it.
	Unsettled map[string]bool `json:"-"`
	// Deleted marks a record that was deleted (archived, soft-deleted) in
	// its system. Its Fields may be incomplete.
	Deleted bool
	// MergedInto, on a Deleted record, is the ID of the record it was
	// merged into (the survivor of a merge of duplicates, Salesforce's
	// MasterRecordId), for systems that report merges, or the record's
	// new ID when its key changed (a PostgreSQL UPDATE of the primary
	// key): the contact linked to the record moves to the survivor
	// rather than following the deletion policy.
	MergedInto string
	// Unread names the fields of a live record that the source could not
	// read for this version of it (PostgreSQL's logical replication
	// leaves out an unchanged TOASTed value, and the row was gone by the
	// time it was to be read): they are absent from Fields, and the
	// reconciler keeps what the contact holds of the targets mapped from
	// them instead of clearing them. Nil for a record read whole.
	Unread []string
	// Invalid, when set, says why the source could not read the record
	// whole (a malformed line of a file: a wrong field count, a broken
	// quote, invalid UTF-8, an empty id). The reconciler writes nothing
	// for it and sets it aside as a dead letter naming this error. Fields
	// then hold at most the record's id field, when it could be read, so
	// that its contact is not taken for deleted; when it could not, ID
	// names where the record is ("line 57") and the pass infers no
	// deletion.
	Invalid error `json:"-"`
}

// Batch is a group of records with the checkpoint that follows them.
type Batch struct {
	Records []Record
	// Checkpoint is the opaque position after this batch: Changes called
	// with it resumes with the first record not in this or an earlier
	// batch. Empty in snapshots.
	Checkpoint string
}

// BatchFunc receives batches in order. Returning an error stops the read
// and is returned by the read, wrapped.
type BatchFunc func(ctx context.Context, b Batch) error

// Source reads records from a system.
type Source interface {
	// Changes calls fn, in order, with batches of the records created,
	// changed or deleted after checkpoint ("" means from the beginning),
	// oldest change first. A record may appear again in a later call
	// (an overlap is harmless, a gap is not). It returns when the source
	// has nothing newer, when ctx is done (ctx.Err()), or when fn fails.
	// A source that is not Incremental reads everything on each call.
	Changes(ctx context.Context, checkpoint string, fn BatchFunc) error
	// Snapshot calls fn with batches holding every live record of the
	// source, for full resyncs and deletion detection. Batches carry no
	// checkpoint. Memory use must not grow with the number of records.
	Snapshot(ctx context.Context, fn BatchFunc) error
	// Close releases the source's connections and files.
	Close() error
}

// Op is the kind of a write-back change.
type Op int

// Write-back operations.
const (
	OpCreate Op = iota + 1
	OpUpdate
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return "unknown"
}

// Change is one write into the other system.
type Change struct {
	Op Op
	// ID addresses the record for updates and deletes; empty for creates.
	ID string
	// Fields are the values to write: only the mapped fields that changed
	// for updates, every mapped field for creates, nothing for deletes.
	Fields map[string]any
	// Soft asks a delete to mark the record deleted (where the system has
	// a soft-delete column) rather than remove it.
	Soft bool
	// IfUnchangedSince, when not zero, makes an update or a delete
	// conditional: it is applied only if the record's UpdatedAt still
	// equals this time (the value read before deciding), else it fails
	// with ErrChanged and writes nothing (a delete of a record already
	// deleted succeeds as without it). Connectors whose records keep no
	// change time, or whose API cannot condition the write, ignore it.
	IfUnchangedSince time.Time
}

// WriteResult is the outcome of one Change.
type WriteResult struct {
	// ID is the record's ID: assigned by the system for creates.
	ID string
	// Err is the change's own failure; nil when it was applied. It tells
	// a refusal (ErrRefused) from a write whose outcome is unknown
	// (ErrOutcomeUnknown); see errors.go.
	Err error
}

// Writer writes changes back into a system (the reverse direction).
type Writer interface {
	// Write applies changes and returns one result per change, in the
	// same order. A change that fails on its own has its Err set and does
	// not stop the others; a returned error means the whole call failed
	// and none of the results can be trusted (the caller retries the
	// batch, so writes must be safe to repeat: an update or delete
	// repeated after success changes nothing further). Updating or
	// deleting a record that does not exist yields ErrNotFound.
	Write(ctx context.Context, changes []Change) ([]WriteResult, error)
}

// FieldLister is implemented by sources that can tell which fields their
// records have, so that a mapping naming an unknown field is refused at
// validation rather than at the first run.
type FieldLister interface {
	// Fields returns the names of the fields the source's records carry.
	Fields(ctx context.Context) ([]string, error)
}

// ErrNotFound is returned (wrapped) when a record does not exist.
var ErrNotFound = errors.New("record not found")

// ErrChanged is returned (wrapped) when a conditional update finds that
// the record changed since it was read (Change.IfUnchangedSince): the
// caller reads it again and decides anew.
var ErrChanged = errors.New("record changed meanwhile")

// ErrReadOnly is returned when a write is asked of a read-only source.
var ErrReadOnly = errors.New("connector is read-only")

// Settings are a connector type's own configuration, decoded strictly
// from the connector's `settings:` block.
type Settings interface {
	// Validate returns every problem of the settings, each naming its key
	// ("path: required"), or nil.
	Validate() []error
}

// Options are what the daemon hands a connector when opening it.
type Options struct {
	// Name is the connector's name in the configuration.
	Name string
	// Settings is the value returned by Type.NewSettings, decoded.
	Settings Settings
	// Fields are the record fields the mapping reads; a source may limit
	// what it fetches to them. Empty means every field.
	Fields []string
	// Limiter, when set, paces every call to a remote API.
	Limiter *rate.Limiter
	// Log is the connector's logger.
	Log *logrus.Entry
	// Inspect is set when the source is opened only to be looked at
	// (syncd init's sampling): it leaves nothing behind on the source's
	// side (no replication slot or publication) and reads as it would
	// when polling.
	Inspect bool
	// ActivityTable is where a connector of Type.ActivityTable writes
	// activities (the activities block's table and mapping); nil when it
	// logs none.
	ActivityTable *ActivityTable
}

// Type describes one kind of connector.
type Type struct {
	// Name is the value of `type:` in the configuration.
	Name string
	// NewSettings returns a pointer to a fresh settings value, with its
	// defaults, for the YAML decoder to fill.
	NewSettings func() Settings
	// Open opens a source. The returned Source also implements Writer
	// when Writable is true.
	Open func(ctx context.Context, opts Options) (Source, error)
	// Writable is true when the connector can take `direction: both` or
	// `to-crm`.
	Writable bool
	// Incremental is false when Changes reads the whole source each time:
	// records linked earlier but missing from a complete pass were
	// deleted at the source.
	Incremental bool
	// SoftDelete reports whether the connector can mark records deleted.
	SoftDelete bool
	// StagesCreates is true when the Writer commits every create in a
	// transaction after telling its id to the context's StageFunc
	// (stage.go).
	StagesCreates bool
	// ActivityTable is true when the connector logs activities as rows of
	// a table the configuration names (activities.table and
	// activities.mapping) rather than on a record's timeline.
	ActivityTable bool
	// Capabilities are the optional interfaces the connector's Source
	// implements (capability.go). The contract suite checks them against
	// the opened source, and docs/CONNECTORS.md's table against them.
	Capabilities []Capability
}

// NormalizeID is a record id as syncd keys it everywhere (the duplicate
// checks, the link, the contact's externalId): without the Unicode
// whitespace around it, so that "p100" and " p100" are one id.
func NormalizeID(id string) string { return strings.TrimFunc(id, unicode.IsSpace) }

// ErrResyncNeeded is returned (wrapped) by Changes when the source lost
// track of what changed since the checkpoint (a database's replication
// slot invalidated or dropped behind syncd's back): the caller runs a
// full resync of the connector, whose Snapshot starts tracking again.
var ErrResyncNeeded = errors.New("source lost its change position; resync needed")
