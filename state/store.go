package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Errors returned by the store, wrapped with context; test with errors.Is.
var (
	// ErrLocked means another process (or another Store in this process)
	// holds the file.
	ErrLocked = errors.New("state file is locked by another process: a syncd daemon may be running " +
		"on it (use its admin address, or stop it first)")
	// ErrNotFound means the requested item does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSchemaTooNew means the file was written by a newer syncd.
	ErrSchemaTooNew = errors.New("state file was written by a newer syncd (schema version too new)")
	// ErrMigrationNeeded means a read-only Open found a file in an older
	// schema; opening it once read-write migrates it.
	ErrMigrationNeeded = errors.New("state file has an older schema: open it read-write once to migrate it")
	// ErrInvalidFile means the file is not a syncd state file: not a bbolt
	// database, a truncated or damaged one, or another program's database.
	ErrInvalidFile = errors.New("not a valid syncd state file")
	// ErrContactLinked means Links.Put would link a contact that is already
	// linked to another record of the same connector.
	ErrContactLinked = errors.New("contact already linked to another record")
)

// Options configure Open.
type Options struct {
	// Timeout is how long Open waits for the file lock; default 1s.
	Timeout time.Duration
	// ReadOnly opens the file with a shared lock; writes fail. A read-only
	// Open never creates or migrates a file.
	ReadOnly bool
	// NoSync skips fsync on commit: a crash may lose or corrupt the file.
	// For tests and benchmarks only.
	NoSync bool
	// Now is the clock; default time.Now.
	Now func() time.Time
	// EventTTL is how long Inbox.Enqueue remembers a webhook id for
	// deduplication; default 7 days (the service publishes no retry
	// schedule, and common schedules end within 3 days).
	EventTTL time.Duration
}

// DefaultEventTTL is the default Options.EventTTL.
const DefaultEventTTL = 7 * 24 * time.Hour

// initialMmapSize is 1 GiB on 64-bit systems.
const initialMmapSize = 1 << 30 * (strconv.IntSize / 64)

// allocSize is how much the file grows at a time (bbolt's AllocSize).
const allocSize = 128 << 10

// file is the open bbolt database that every domain of the store shares:
// each domain type embeds it and runs its operations through tx.
type file struct {
	db   *bolt.DB
	path string
	now  func() time.Time
	// broken is set when a write transaction panicked (see tx).
	broken atomic.Pointer[error]
}

// Store is an open state file, one domain type per concern. The domains
// share the file: an operation that records in several of them (a reverse
// round's links, conflicts and acknowledged events, say) is one method of
// the domain that owns the use case, run in one transaction. Every method
// is safe for concurrent use. Open sets the fields; never replace them.
type Store struct {
	*file
	// Links are the links between records and workspace contacts.
	Links *Links
	// Checkpoints are the connectors' read cursors and mapping digests.
	Checkpoints *Checkpoints
	// Inbox holds acknowledged webhook events and the seen webhook ids.
	Inbox *Inbox
	// DeadLetters are the writes set aside after their retries.
	DeadLetters *DeadLetters
	// FieldWarnings are the values a connector could not take.
	FieldWarnings *FieldWarnings
	// Matches are the match index of workspace contacts, its documents
	// and the held matches.
	Matches *Matches
	// HeldDeletes are the contact deletes held for an operator.
	HeldDeletes *HeldDeletes
	// RefusedDeletes are the mass deletes the guard refused.
	RefusedDeletes *RefusedDeletes
	// Runs is the run history.
	Runs *Runs
	// Conflicts is the conflict journal.
	Conflicts *Conflicts
	// Reverse is what the reverse direction keeps beside the links, and
	// the transaction that records one of its rounds.
	Reverse *Reverse
	// Webhooks are the webhook signing secrets and routes.
	Webhooks *Webhooks
	// History is the health page's 24-hour history.
	History *History
	// Activities are the queue and records of calls and texts logged on
	// records (activity.go).
	Activities *Activities
}

// newStore ties the domains to f.
func newStore(f *file, eventTTL time.Duration) *Store {
	in := &Inbox{file: f, ttl: eventTTL}
	return &Store{
		file:           f,
		Links:          &Links{f},
		Checkpoints:    &Checkpoints{f},
		Inbox:          in,
		DeadLetters:    &DeadLetters{f},
		FieldWarnings:  &FieldWarnings{f},
		Matches:        &Matches{f},
		HeldDeletes:    &HeldDeletes{f},
		RefusedDeletes: &RefusedDeletes{f},
		Runs:           &Runs{f},
		Conflicts:      &Conflicts{f},
		Reverse:        &Reverse{file: f, inbox: &in.index},
		Webhooks:       &Webhooks{file: f},
		History:        &History{f},
		Activities:     &Activities{file: f, ttl: eventTTL},
	}
}

// The domains of a Store (see Store's fields).
type (
	// Links are the links between records and workspace contacts.
	Links struct{ *file }
	// Checkpoints are the connectors' read cursors and mapping digests.
	Checkpoints struct{ *file }
	// DeadLetters are the writes set aside after their retries.
	DeadLetters struct{ *file }
	// FieldWarnings are the values a connector could not take.
	FieldWarnings struct{ *file }
	// Matches are the match index of workspace contacts, its documents
	// and the held matches.
	Matches struct{ *file }
	// HeldDeletes are the contact deletes held for an operator.
	HeldDeletes struct{ *file }
	// RefusedDeletes are the mass deletes the guard refused.
	RefusedDeletes struct{ *file }
	// Runs is the run history.
	Runs struct{ *file }
	// Conflicts is the conflict journal.
	Conflicts struct{ *file }
	// History is the health page's 24-hour history.
	History struct{ *file }
)

// Inbox holds the acknowledged webhook events not yet applied, and the
// webhook ids seen (for deduplication).
type Inbox struct {
	*file
	// ttl is how long Enqueue remembers a webhook id.
	ttl time.Duration
	// events groups concurrent Enqueue calls into shared commits.
	events eventQueue
	// index indexes the inbox's events by contact (PendingOf).
	index inboxIndex
}

// Reverse is what the reverse direction keeps beside the links: pending
// creates and reverse-only agreed values; Commit records a round.
type Reverse struct {
	*file
	// inbox is the Inbox's index, told of the events Commit acknowledges.
	inbox *inboxIndex
	// flights are the forward patches' flights (PutFlight), in memory.
	flights flights
	// deletions is when PutDeletion last forgot the old deletions.
	deletions deletionPrune
}

// Webhooks are the webhook signing secrets and the routes form.
type Webhooks struct {
	*file
	// secrets caches the decoded secrets for Secrets, which the receiver
	// calls for every delivery (see secretCache).
	secrets secretCache
}

// Open opens the state file at path, creating it when it does not exist
// (unless opts.ReadOnly), and migrates it to the current schema.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.EventTTL <= 0 {
		opts.EventTTL = DefaultEventTTL
	}
	if err := checkFile(path, opts.ReadOnly, opts.Timeout); err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if !opts.ReadOnly {
		if _, err := os.Lstat(path); isNotExist(err) {
			if err := createFile(path); err != nil {
				return nil, fmt.Errorf("open state %s: %w", path, err)
			}
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      opts.Timeout,
		ReadOnly:     opts.ReadOnly,
		NoSync:       opts.NoSync,
		FreelistType: bolt.FreelistMapType,
		// Map a large address range up front: growing the mapping waits
		// for every read transaction, so a writer would stall behind a
		// long Backup. It costs address space, not memory.
		InitialMmapSize: initialMmapSize,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open state %s: %w", path, ErrLocked)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) ||
		errors.Is(err, berrors.ErrChecksum) {
		return nil, fmt.Errorf("open state %s: %w: %v", path, ErrInvalidFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	// Grow the file in small steps: with the large initial mapping bbolt
	// would otherwise add its default 16 MiB at each growth, a file many
	// times its data's size for a small workspace.
	db.AllocSize = allocSize
	s := newStore(&file{db: db, path: path, now: opts.Now}, opts.EventTTL)
	if err := s.migrate(opts.ReadOnly); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	return s, nil
}

// Close releases the file and its lock.
func (s *Store) Close() error {
	if s.broken.Load() != nil {
		// bbolt may still hold its writer lock after the panic: do not
		// wait for it forever (the OS drops the file lock at exit).
		done := make(chan error, 1)
		go func() { done <- s.db.Close() }()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("close state %s: %w", s.path, err)
			}
			return nil
		case <-time.After(closeWait):
			return fmt.Errorf("close state %s: %w", s.path, *s.broken.Load())
		}
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close state %s: %w", s.path, err)
	}
	return nil
}

// Path is the file's path as given to Open.
func (s *Store) Path() string { return s.path }

// Backup writes a consistent copy of the whole file to w, through one read
// transaction: writers go on meanwhile (only a writer that must grow the
// mapping past its initial 1 GiB waits for the copy to finish). The copy
// is itself a state file, and holds exactly what was committed when the
// copy started.
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	err := s.tx(false, func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup state %s: %w", s.path, err)
	}
	return n, nil
}

// Check verifies the file's internal structure (every page reachable once,
// no page beyond the end). It reads the whole file: for the doctor and the
// admin endpoints, not for every start.
func (s *Store) Check() error {
	return s.tx(false, func(tx *bolt.Tx) error {
		var msgs []string
		for err := range tx.Check() {
			// Drain the channel: the checker uses tx until it closes it.
			if len(msgs) < 10 {
				msgs = append(msgs, err.Error())
			}
		}
		if len(msgs) > 0 {
			return fmt.Errorf("check state %s: %w: %s", s.path, ErrInvalidFile, strings.Join(msgs, "; "))
		}
		return nil
	})
}

// update runs fn in a write transaction (see tx) and wraps its error with
// what.
func (s *file) update(what string, fn func(tx *bolt.Tx) error) error {
	if err := s.tx(true, fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// view runs fn in a read transaction (see tx) and wraps its error with
// what.
func (s *file) view(what string, fn func(tx *bolt.Tx) error) error {
	if err := s.tx(false, fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// u64 encodes n as 8 big-endian bytes, so that keys sort by number.
func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}

// getU64 decodes a key or value written by u64; 0 when malformed.
func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// nanos stores a time as Unix nanoseconds; 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos, in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// checkName refuses names that cannot be part of a key.
func checkName(kind, name string) error {
	if name == "" {
		return fmt.Errorf("%s name is empty", kind)
	}
	if strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%s name %q contains a NUL byte", kind, name)
	}
	return nil
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
