package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// timePlaceholder, in a backup file's name, stands for the time of the
// backup, so that a scheduled job (cron, a Kubernetes CronJob, whose image
// has no shell to run date) writes a new file each time.
const timePlaceholder = "{time}"

// backupTimeLayout is how {time} is written: UTC, sortable, no colons.
const backupTimeLayout = "20060102T150405Z"

// backupName is a backup file's name as given, with {time} unexpanded,
// and how many of its kind to keep.
type backupName struct {
	pattern string
	keep    int
}

// newBackupName checks the name and --keep.
func newBackupName(pattern string, keep int) (backupName, error) {
	n := strings.Count(filepath.Base(pattern), timePlaceholder)
	switch {
	case keep < 0:
		return backupName{}, fmt.Errorf("--keep %d: give the number of backups to keep, or 0 to keep all: %w", keep, ErrUsage)
	case strings.Contains(filepath.Dir(pattern), timePlaceholder):
		return backupName{}, fmt.Errorf("%s: %s may stand only in the file's name, not in its folder: %w", pattern, timePlaceholder, ErrUsage)
	case n > 1:
		return backupName{}, fmt.Errorf("%s: %s may stand once: %w", pattern, timePlaceholder, ErrUsage)
	case keep > 0 && n == 0:
		return backupName{}, fmt.Errorf("--keep needs %s in the backup file's name (such as /backups/syncd-%s.db), to tell its backups apart: %w", timePlaceholder, timePlaceholder, ErrUsage)
	}
	return backupName{pattern: pattern, keep: keep}, nil
}

// path is the file to write for a backup taken at t.
func (b backupName) path(t time.Time) string {
	return strings.Replace(b.pattern, timePlaceholder, t.UTC().Format(backupTimeLayout), 1)
}

// prune removes the oldest backups of this name beyond keep. Only files
// whose name is the pattern with a time in place of {time} are counted
// and removed; temporary files of a backup under way are not.
func (b backupName) prune(w io.Writer) error {
	if b.keep == 0 {
		return nil
	}
	dir, base := filepath.Split(b.pattern)
	prefix, suffix, _ := strings.Cut(base, timePlaceholder)
	entries, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return fmt.Errorf("prune backups: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		stamp, ok := strings.CutPrefix(name, prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if stamp, ok = strings.CutSuffix(stamp, suffix); !ok {
			continue
		}
		if _, err := time.Parse(backupTimeLayout, stamp); err == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names) // the layout sorts by time
	for len(names) > b.keep {
		path := filepath.Join(dir, names[0])
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("prune backups: %w", err)
		}
		fmt.Fprintf(w, "removed old backup %s (keeping %d)\n", path, b.keep)
		names = names[1:]
	}
	return nil
}
