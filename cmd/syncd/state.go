package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("state", "work on the state file: backup FILE (safe while the daemon runs)", func(m *Main) Command { return &StateCommand{m: m} })
}

// stateLockWait is how long the commands that may work on the state file
// directly wait for its lock before concluding that a daemon holds it.
const stateLockWait = 500 * time.Millisecond

// openStateOrDaemon opens the state file when no daemon holds it, else
// returns a client of that daemon's admin API. A read-only open never
// creates or migrates the file.
func openStateOrDaemon(cfg *config.Config, readOnly bool) (*state.Store, *admin.Client, error) {
	if _, err := os.Stat(cfg.State.Path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no state file at %s (state.path): syncd has not run with this configuration yet", cfg.State.Path)
	}
	st, err := state.Open(cfg.State.Path, state.Options{ReadOnly: readOnly, Timeout: stateLockWait})
	switch {
	case err == nil:
		return st, nil, nil
	case errors.Is(err, state.ErrLocked):
		if cfg.Admin.Listen == "" {
			return nil, nil, fmt.Errorf("the state file %s is held by a running daemon and admin.listen is not set, so it cannot be asked: set admin.listen, or stop the daemon", cfg.State.Path)
		}
		return nil, admin.NewClient(cfg.Admin.Listen, cfg.Admin.Token), nil
	default:
		return nil, nil, err
	}
}

// StateCommand works on the state file.
type StateCommand struct{ m *Main }

// Run dispatches the state subcommands.
func (c *StateCommand) Run(ctx context.Context, args []string) error {
	const usage = "state backup --config FILE [--force] [--admin-url URL] [--keep N] BACKUP_FILE"
	if len(args) == 0 || args[0] != "backup" {
		fmt.Fprintf(c.m.Stderr, "Usage: syncd %s\n", usage)
		return ErrUsage
	}
	fs := c.m.newFlagSet("state backup", usage)
	conf := c.m.configFlag(fs)
	force := fs.Bool("force", false, "replace BACKUP_FILE if it exists")
	adminURL := fs.String("admin-url", "", "back up through the running daemon's admin API at this `URL` (a backup job on another machine or pod), without looking for the state file")
	keep := fs.Int("keep", 0, "with {time} in BACKUP_FILE: keep the newest `N` backups of that name and remove older ones (0 keeps all)")
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fs.Usage()
		return fmt.Errorf("want one backup file, got %d arguments: %w", len(rest), ErrUsage)
	}
	name, err := newBackupName(rest[0], *keep)
	if err != nil {
		return err
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	dest := name.path(time.Now())
	if err := c.backup(ctx, cfg, dest, *adminURL, *force); err != nil {
		return err
	}
	return name.prune(c.m.Stdout)
}

// backup writes a consistent copy of the state to a temporary file next
// to dest, syncs it, checks that it opens as a state file, and renames it
// to dest: dest is never a partial copy.
func (c *StateCommand) backup(ctx context.Context, cfg *config.Config, dest, adminURL string, force bool) error {
	if _, err := os.Stat(dest); err == nil && !force {
		return fmt.Errorf("%s exists: choose another name, or --force to replace it", dest)
	}
	var st *state.Store
	var cl *admin.Client
	var err error
	daemonAt := cfg.Admin.Listen
	if adminURL != "" {
		cl, daemonAt = admin.NewClient(adminURL, cfg.Admin.Token), adminURL
	} else {
		st, cl, err = openStateOrDaemon(cfg, true)
	}
	// A file of an older syncd, not yet migrated (backing up before an
	// upgrade, with the new binary): no daemon holds it, copy it as it is.
	older := errors.Is(err, state.ErrMigrationNeeded)
	if err != nil && !older {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		if st != nil {
			st.Close()
		}
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	var n int64
	via := "the state file"
	switch {
	case older:
		via = "a copy of the older state file"
		n, err = copyFile(tmp, cfg.State.Path)
	case st != nil:
		n, err = st.Backup(tmp)
		st.Close()
	default:
		via = "the running daemon at " + daemonAt
		n, err = cl.Backup(ctx, tmp)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backup through %s: %w", via, err)
	}
	schema, err := checkBackup(tmp.Name())
	if err != nil {
		return fmt.Errorf("backup through %s is not a usable state file (nothing written to %s): %w", via, dest, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if dir, err := os.Open(filepath.Dir(dest)); err == nil {
		_ = dir.Sync() // make the rename durable
		dir.Close()
	}
	version := fmt.Sprintf("schema %d", schema)
	if schema == 0 {
		version = "an older schema (migrated when a newer syncd opens it)"
	}
	fmt.Fprintf(c.m.Stdout, "backup %s: %d bytes, %s, through %s\n", dest, n, version, via)
	return nil
}

// copyFile appends the file at path to w.
func copyFile(w io.Writer, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// checkBackup opens a copy read-only and returns its schema version. A
// copy from an older daemon (a schema this binary would migrate) is fine.
func checkBackup(path string) (int, error) {
	st, err := state.Open(path, state.Options{ReadOnly: true, Timeout: stateLockWait})
	if errors.Is(err, state.ErrMigrationNeeded) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return st.SchemaVersion()
}

// parseInterspersed parses fs's flags wherever they stand among the
// positional arguments (syncd deadletters retry 12 --config FILE) and
// returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, nil
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}
