package main

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestBackupNameRefused(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		keep    int
		want    string
	}{
		{"keep without time", "/backups/syncd.db", 3, "--keep needs {time}"},
		{"negative keep", "/backups/syncd-{time}.db", -1, "--keep -1"},
		{"time twice", "/backups/{time}-{time}.db", 0, "may stand once"},
		{"time in the folder", "/backups/{time}/syncd.db", 0, "only in the file's name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newBackupName(tc.pattern, tc.keep)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("newBackupName(%q, %d) = %v, want a usage error containing %q", tc.pattern, tc.keep, err, tc.want)
			}
		})
	}
}

func TestBackupNamePath(t *testing.T) {
	b, err := newBackupName("/backups/syncd-{time}.db", 0)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 3, 17, 9, 0, time.FixedZone("CET", 3600))
	if got, want := b.path(at), "/backups/syncd-20261125T021709Z.db"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
}

// checkScheduledBackup backs up the running daemon as a backup job in
// another pod does: through --admin-url, with a configuration whose
// state file is not on its machine, into a folder that already holds
// older backups, keeping the newest two.
func checkScheduledBackup(t *testing.T, e *opsEnv) {
	t.Helper()
	text, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(e.dir, "job.yaml")
	text = []byte(strings.ReplaceAll(string(text), e.state, filepath.Join(e.dir, "not-here", "syncd.db")))
	if err := os.WriteFile(elsewhere, text, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, "backups")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"syncd-20250101T000000Z.db", "syncd-20250102T000000Z.db", "syncd-20250103T000000Z.db", "notes.txt", "syncd-latest.db"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := e.must("state", "backup", "--config", elsewhere, "--admin-url", "http://"+e.listen, "--keep", "2", filepath.Join(dir, "syncd-{time}.db"))
	if !strings.Contains(out, "through the running daemon at http://"+e.listen) {
		t.Errorf("backup through --admin-url = %q", out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	sort.Strings(names)
	if len(names) != 4 || names[0] != "notes.txt" || names[1] != "syncd-20250103T000000Z.db" || names[3] != "syncd-latest.db" {
		t.Fatalf("backups folder holds %v; want notes.txt, the newest older backup, the new one and syncd-latest.db", names)
	}
	checkBackupLinks(t, filepath.Join(dir, names[2]), 4)
}
