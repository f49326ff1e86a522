package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// onFile answers the operator's questions from the state file, no daemon
// running. Reads go to the file; what needs a connector (a retry, held
// deletions settled, a resync) opens the configured connectors as the
// daemon would, over the same file.
type onFile struct {
	cfg        *config.Config
	configPath string
	st         *state.Store // nil for a file of an older syncd (olderFile)
	notes      io.Writer    // what could not be looked at, for a person
	log        *logrus.Logger
	d          *daemon.Daemon // opened on the first question that needs it
}

func (m *Main) onFile(cfg *config.Config, configPath string, st *state.Store) *onFile {
	return &onFile{cfg: cfg, configPath: configPath, st: st, notes: m.Stderr, log: newLogger(m, cfg.Log)}
}

func (f *onFile) via() string {
	if f.st == nil {
		return "a copy of the older state file"
	}
	return "the state file"
}

// Close closes the connectors, then the file. A connector that does not
// close cleanly is a note: what the verb did is done.
func (f *onFile) Close() error {
	if f.d != nil {
		if err := f.d.Close(); err != nil {
			fmt.Fprintf(f.notes, "note: %v\n", err)
		}
	}
	if f.st == nil {
		return nil
	}
	return f.st.Close()
}

// store is the open file; a file of an older syncd answers nothing but
// its backup.
func (f *onFile) store() (*state.Store, error) {
	if f.st == nil {
		return nil, fmt.Errorf("state file %s: %w", f.cfg.State.Path, state.ErrMigrationNeeded)
	}
	return f.st, nil
}

// daemon opens the configured connectors over the file, once.
func (f *onFile) daemon(ctx context.Context, o daemon.Options) (*daemon.Daemon, error) {
	if f.d != nil {
		return f.d, nil
	}
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	o.Log, o.Store, o.Version, o.ConfigPath = f.log, st, Version, f.configPath
	if f.d, err = daemon.New(ctx, f.cfg, o); err != nil {
		return nil, err
	}
	return f.d, nil
}

// Status is daemon.BuildStatus, and the orphaned replication slots,
// looked for now since no daemon looks for them.
func (f *onFile) Status(ctx context.Context) (admin.Status, *admin.Readiness, error) {
	st, err := f.store()
	if err != nil {
		return admin.Status{}, nil, err
	}
	out, err := daemon.BuildStatus(f.cfg, st, Version, f.configPath)
	if err != nil {
		return out, nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if out.ReplicationOrphans, err = daemon.ReplicationOrphans(lctx, f.cfg, f.configPath); err != nil {
		fmt.Fprintf(f.notes, "note: orphaned replication slots not checked everywhere: %v\n", err)
	}
	return out, nil, nil
}

func (f *onFile) DeadLetters(_ context.Context, connector string) ([]admin.DeadLetter, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	return daemon.ListDeadLetters(st.DeadLetters, connector)
}

func (f *onFile) FieldWarnings(_ context.Context, connector string) ([]admin.FieldWarning, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	return daemon.ListFieldWarnings(st.FieldWarnings, connector)
}

func (f *onFile) RetryDeadLetter(ctx context.Context, id uint64) (admin.RetryResponse, error) {
	d, err := f.daemon(ctx, daemon.Options{})
	if err != nil {
		return admin.RetryResponse{}, err
	}
	return d.RetryDeadLetter(ctx, id)
}

func (f *onFile) DropDeadLetter(_ context.Context, id uint64) error {
	st, err := f.store()
	if err != nil {
		return err
	}
	return st.DeadLetters.Delete(id)
}

func (f *onFile) Conflicts(_ context.Context, connector string, limit int) ([]admin.Conflict, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	return daemon.ListConflicts(st.Conflicts, connector, limit)
}

func (f *onFile) HeldMatches(_ context.Context, connector string) ([]admin.HeldMatch, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	return daemon.ListHeldMatches(f.cfg, st.Matches, connector)
}

func (f *onFile) ResolveHeldMatch(ctx context.Context, connector, externalID, contactID string) (reconcile.Summary, error) {
	d, err := f.daemon(ctx, daemon.Options{})
	if err != nil {
		return reconcile.Summary{}, err
	}
	return d.ResolveHeldMatch(ctx, connector, externalID, contactID)
}

func (f *onFile) HeldDeletes(_ context.Context, connector string) ([]state.HeldDelete, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	return daemon.ListHeldDeletes(f.cfg, st.HeldDeletes, connector)
}

func (f *onFile) SettleHeldDeletes(ctx context.Context, connector, action string) (int, error) {
	d, err := f.daemon(ctx, daemon.Options{})
	if err != nil {
		return 0, err
	}
	if action == "approve" {
		return d.ApproveHeldDeletes(ctx, connector)
	}
	return d.DropHeldDeletes(connector)
}

// Resync runs the resync here, its plan printed as it is decided.
func (f *onFile) Resync(ctx context.Context, r resyncAsk) ([]reconcile.Summary, error) {
	d, err := f.daemon(ctx, daemon.Options{AllowMassDelete: r.AllowMassDelete, AllowMassRekey: r.AllowMassRekey})
	if err != nil {
		return nil, err
	}
	stop := r.Watch(localPasses(d.Connectors()), f.log, barEvery)
	defer stop()
	return d.Resync(ctx, r.Connector, reconcile.ResyncOptions{DryRun: r.DryRun, Plan: r.Plan})
}

// Backup copies the file through bbolt (a consistent copy), or, for a
// file of an older syncd, as it is.
func (f *onFile) Backup(_ context.Context, w io.Writer) (int64, error) {
	if f.st == nil {
		return copyFile(w, f.cfg.State.Path)
	}
	return f.st.Backup(w)
}

// copyFile appends the file at path to w.
func copyFile(w io.Writer, path string) (int64, error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	return io.Copy(w, file)
}
