package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/syncd-io/syncd/state"
)

func init() {
	registerCommand("state", "work on the state file: backup FILE (safe while the daemon runs)", func(m *Main) Command { return &StateCommand{m: m} })
}

// StateCommand works on the state file.
type StateCommand struct{ m *Main }

// Run dispatches the state subcommands.
func (c *StateCommand) Run(ctx context.Context, args []string) error {
	const usage = "state backup --config FILE [--force] [--admin-url URL] [--keep N] BACKUP_FILE"
	return c.m.runVerbs(ctx, "state", usage, map[string]func() opVerb{"backup": func() opVerb { return backupVerb(usage) }}, args)
}

// backupVerb writes a consistent copy of the state to a temporary file
// next to the backup file, syncs it, checks that it opens as a state
// file, and renames it: the backup file is never a partial copy.
func backupVerb(usage string) opVerb {
	var force *bool
	var adminURL *string
	var keep *int
	var name backupName
	var dest string
	return opVerb{
		usage:  usage,
		access: readState,
		flags: func(fs *flag.FlagSet) func([]string) error {
			force = fs.Bool("force", false, "replace BACKUP_FILE if it exists")
			adminURL = fs.String("admin-url", "", "back up through the running daemon's admin API at this `URL` (a backup job on another machine or pod), without looking for the state file")
			keep = fs.Int("keep", 0, "with {time} in BACKUP_FILE: keep the newest `N` backups of that name and remove older ones (0 keeps all)")
			return func(rest []string) error {
				if len(rest) != 1 {
					fs.Usage()
					return fmt.Errorf("want one backup file, got %d arguments: %w", len(rest), ErrUsage)
				}
				var err error
				if name, err = newBackupName(rest[0], *keep); err != nil {
					return err
				}
				dest = name.path(time.Now())
				if _, err := os.Stat(dest); err == nil && !*force {
					return fmt.Errorf("%s exists: choose another name, or --force to replace it", dest)
				}
				return nil
			}
		},
		// A file of an older syncd, not yet migrated (backing up before an
		// upgrade, with the new binary): no daemon holds it, copy it as it is.
		reach: func() reachOptions { return reachOptions{adminURL: *adminURL, olderFile: true} },
		ask: func(ctx context.Context, op operator) (reply, error) {
			line, err := writeBackup(ctx, op, dest)
			if err != nil {
				return nil, err
			}
			var pruned bytes.Buffer
			err = name.prune(&pruned)
			return textFunc(func(w io.Writer) {
				fmt.Fprintln(w, line)
				_, _ = pruned.WriteTo(w)
			}), err
		},
	}
}

// writeBackup writes the backup to dest and returns the line that says so.
func writeBackup(ctx context.Context, op interface {
	backuper
	via() string
}, dest string) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	via := op.via()
	n, err := op.Backup(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("backup through %s: %w", via, err)
	}
	schema, err := checkBackup(tmp.Name())
	if err != nil {
		return "", fmt.Errorf("backup through %s is not a usable state file (nothing written to %s): %w", via, dest, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	if dir, err := os.Open(filepath.Dir(dest)); err == nil {
		_ = dir.Sync() // make the rename durable
		dir.Close()
	}
	version := fmt.Sprintf("schema %d", schema)
	if schema == 0 {
		version = "an older schema (migrated when a newer syncd opens it)"
	}
	return fmt.Sprintf("backup %s: %d bytes, %s, through %s", dest, n, version, via), nil
}

// checkBackup opens a copy read-only and returns its schema version. A
// copy from an older daemon (a schema this binary would migrate) is fine.
func checkBackup(path string) (int, error) {
	st, err := openStateFile(path, readState)
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
