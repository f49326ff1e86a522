package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// How the commands reach syncd's state: the operator verbs (status, dead
// letters, conflicts, matches, held deletions, resync, backup) ask an
// operator, which is the running daemon's admin API when a daemon holds
// the state file (throughDaemon) and the state file itself when none
// does (onFile). reach chooses, in one place; openStateFile is the one
// place the commands open a state file, with one lock wait.

// stateLockWait is how long a command waits for the state file's lock
// before concluding that a daemon holds it (state.Open's own default, so
// that run waits as it always did).
const stateLockWait = time.Second

// access is what a command needs of the state file.
type access int

const (
	// readState opens the file read-only; it must exist (a read never
	// creates or migrates it).
	readState access = iota
	// writeState opens it for writing; it must exist.
	writeState
	// createState opens it for writing, created when missing (run,
	// resync, webhooks register).
	createState
)

// openStateFile opens the state file at path, waiting stateLockWait for
// its lock (state.ErrLocked after that).
func openStateFile(path string, a access) (*state.Store, error) {
	if a != createState {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no state file at %s (state.path): syncd has not run with this configuration yet", path)
		}
	}
	return state.Open(path, state.Options{ReadOnly: a == readState, Timeout: stateLockWait})
}

// The questions operators ask, each answered the same by a running
// daemon and by the state file. A verb asks for the one it needs.
type (
	statusAsker interface {
		// Status is the status and, of a live daemon, its readiness.
		Status(ctx context.Context) (admin.Status, *admin.Readiness, error)
	}
	deadLetterLister interface {
		DeadLetters(ctx context.Context, connector string) ([]admin.DeadLetter, error)
		FieldWarnings(ctx context.Context, connector string) ([]admin.FieldWarning, error)
	}
	deadLetterSettler interface {
		RetryDeadLetter(ctx context.Context, id uint64) (admin.RetryResponse, error)
		DropDeadLetter(ctx context.Context, id uint64) error
	}
	conflictLister interface {
		Conflicts(ctx context.Context, connector string, limit int) ([]admin.Conflict, error)
	}
	matchResolver interface {
		HeldMatches(ctx context.Context, connector string) ([]admin.HeldMatch, error)
		// ResolveHeldMatch adopts contactID for the held record, or
		// creates a contact when contactID is "".
		ResolveHeldMatch(ctx context.Context, connector, externalID, contactID string) (reconcile.Summary, error)
	}
	heldDeleteSettler interface {
		HeldDeletes(ctx context.Context, connector string) ([]state.HeldDelete, error)
		// SettleHeldDeletes approves ("approve") or drops ("drop") a
		// connector's held deletions and says how many.
		SettleHeldDeletes(ctx context.Context, connector, action string) (int, error)
	}
	resyncer interface {
		Resync(ctx context.Context, r resyncAsk) ([]reconcile.Summary, error)
	}
	backuper interface {
		// Backup writes a consistent copy of the state file to w.
		Backup(ctx context.Context, w io.Writer) (int64, error)
	}
)

// resyncAsk is a resync as the resync verb asks it.
type resyncAsk struct {
	admin.ResyncRequest
	// Plan receives each write of the plan.
	Plan func(reconcile.PlanEntry)
	// Watch starts showing the passes from src, looked at every every,
	// with log the logger of the passes; it returns the function that
	// stops showing them.
	Watch func(src passSource, log *logrus.Logger, every time.Duration) (stop func())
}

// operator is every question, with where its answers come from.
type operator interface {
	statusAsker
	deadLetterLister
	deadLetterSettler
	conflictLister
	matchResolver
	heldDeleteSettler
	resyncer
	backuper
	// via says where the answers come from: "the state file" or "the
	// running daemon at ADDRESS".
	via() string
	Close() error
}

// reachOptions are the few ways a verb bends the choice.
type reachOptions struct {
	// adminURL, when set, asks the daemon there without looking for the
	// state file (a backup job on another machine).
	adminURL string
	// olderFile accepts a file of an older syncd, not yet migrated: only
	// its backup (a plain copy) is then possible.
	olderFile bool
}

// reach returns the operator for cfg: the state file when no daemon holds
// it, else the daemon through its admin API.
func (m *Main) reach(cfg *config.Config, configPath string, a access, o reachOptions) (operator, error) {
	if o.adminURL != "" {
		return m.throughDaemon(cfg, admin.NewClient(o.adminURL, cfg.Admin.Token), o.adminURL), nil
	}
	st, err := openStateFile(cfg.State.Path, a)
	switch {
	case err == nil:
		return m.onFile(cfg, configPath, st), nil
	case o.olderFile && errors.Is(err, state.ErrMigrationNeeded):
		return m.onFile(cfg, configPath, nil), nil
	case errors.Is(err, state.ErrLocked):
		if cfg.Admin.Listen == "" {
			return nil, fmt.Errorf("the state file %s is held by a running daemon and admin.listen is not set, so it cannot be asked: set admin.listen, or stop the daemon: %w", cfg.State.Path, err)
		}
		return m.throughDaemon(cfg, admin.NewClient(cfg.Admin.Listen, cfg.Admin.Token), cfg.Admin.Listen), nil
	default:
		return nil, err
	}
}
