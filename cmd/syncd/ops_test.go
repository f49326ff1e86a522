package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
)

const opsToken = "ops-test-admin-token"

// opsEnv is a CSV connector's configuration against an emulator: four
// good rows and one whose e-mail cannot be mapped (a dead letter).
type opsEnv struct {
	t      *testing.T
	dir    string
	cfg    string
	state  string
	listen string
	emu    *emulator.Server
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	e := &opsEnv{t: t, dir: t.TempDir()}
	e.emu = emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(e.emu.Close)
	csvPath := filepath.Join(e.dir, "contacts.csv")
	rows := "id,first_name,last_name,email\n1,Ada,Lovelace,ada@example.com\n2,Alan,Turing,alan@example.com\n" +
		"3,Grace,Hopper,not an e-mail <script>\n4,Edsger,Dijkstra,ed@example.com\n5,Barbara,Liskov,bl@example.com\n"
	if err := os.WriteFile(csvPath, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	e.state = filepath.Join(e.dir, "syncd.db")
	e.listen = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e.cfg = filepath.Join(e.dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: e.state},
		Admin:     configfile.Admin{Listen: e.listen, Token: "${SYNCD_ADMIN_TOKEN}"},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": csvPath},
			Mapping: configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{
				"firstName":   configfile.From("first_name"),
				"lastName":    configfile.From("last_name"),
				"emails.work": {From: "email", Transform: []string{"email"}},
			}},
		}},
	}
	if err := f.Write(e.cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

// main runs a subcommand in-process with the admin token in its
// environment.
func (e *opsEnv) main(ctx context.Context, token string, args ...string) (string, string, error) {
	var out, errb capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "SYNCD_ADMIN_TOKEN" {
			return token
		}
		return ""
	}}
	err := m.Run(ctx, args)
	return out.String(), errb.String(), err
}

func (e *opsEnv) must(args ...string) string {
	e.t.Helper()
	out, errs, err := e.main(context.Background(), opsToken, args...)
	if err != nil {
		e.t.Fatalf("syncd %s: %v\n%s", strings.Join(args, " "), err, errs)
	}
	return out
}

// deadLetterID returns the ID of the only dead letter the list shows.
func (e *opsEnv) deadLetterID() string {
	e.t.Helper()
	out := e.must("deadletters", "list", "--config", e.cfg, "--json")
	var d admin.DeadLetter
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &d); err != nil {
		e.t.Fatalf("deadletters list --json = %q: %v", out, err)
	}
	return fmt.Sprint(d.ID)
}

func TestOperatorCommandsWithoutDaemon(t *testing.T) {
	e := newOpsEnv(t)
	ctx := context.Background()
	if _, _, err := e.main(ctx, opsToken, "status", "--config", e.cfg); err == nil || !strings.Contains(err.Error(), "has not run") {
		t.Fatalf("status before any run = %v, want 'has not run'", err)
	}
	if _, err := os.Stat(e.state); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("status created the state file")
	}
	e.must("run", "--once", "--config", e.cfg)

	out := e.must("status", "--config", e.cfg)
	for _, want := range []string{"no daemon holds the state", "dead letters 1", "crm", "csv", "@every 1h", "4 created", "1 failed", "syncd deadletters list --connector crm"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^crm\s+csv\s+@every 1h\s+run .* ago .*\s4\s+1\s+0\s+\S+ ago$`).MatchString(out) {
		t.Errorf("status row of crm is not as expected:\n%s", out)
	}

	out = e.must("deadletters", "list", "--config", e.cfg)
	if !strings.Contains(out, "map") || !strings.Contains(out, "not an e-mail <script>") || strings.Count(out, "\n") != 2 {
		t.Errorf("deadletters list:\n%s", out)
	}
	id := e.deadLetterID()

	// Retried unchanged, the record fails again.
	if _, _, err := e.main(ctx, opsToken, "deadletters", "retry", id, "--config", e.cfg); err == nil || !strings.Contains(err.Error(), "failed again") {
		t.Errorf("retry of an unchanged bad record = %v, want failed again", err)
	}
	if _, _, err := e.main(ctx, opsToken, "deadletters", "retry", "x", "--config", e.cfg); !errors.Is(err, ErrUsage) {
		t.Errorf("retry x = %v, want usage", err)
	}
	out = e.must("deadletters", "drop", "--config", e.cfg, id)
	if !strings.Contains(out, "dead letter "+id+" dropped") {
		t.Errorf("drop = %q", out)
	}
	if out = e.must("deadletters", "list", "--config", e.cfg); !strings.Contains(out, "no dead letters") {
		t.Errorf("list after drop = %q", out)
	}
	if _, _, err := e.main(ctx, opsToken, "deadletters", "drop", id, "--config", e.cfg); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("second drop = %v, want not found", err)
	}

	backup := filepath.Join(e.dir, "backup.db")
	out = e.must("state", "backup", "--config", e.cfg, backup)
	if !strings.Contains(out, "through the state file") {
		t.Errorf("backup = %q", out)
	}
	checkBackupLinks(t, backup, 4)
	if _, _, err := e.main(ctx, opsToken, "state", "backup", "--config", e.cfg, backup); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("backup over an existing file = %v, want a refusal naming --force", err)
	}
	e.must("state", "backup", "--force", "--config", e.cfg, backup)
}

func checkBackupLinks(t *testing.T, path string, want int) {
	t.Helper()
	st, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("backup %s does not open: %v", path, err)
	}
	defer st.Close()
	if n, _ := st.Links.Count("crm"); n != want {
		t.Errorf("backup holds %d links, want %d", n, want)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*.tmp-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestOperatorCommandsThroughTheDaemon(t *testing.T) {
	e := newOpsEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var runErr capture.Buffer
	go func() {
		m := &Main{Stdin: strings.NewReader(""), Stdout: &runErr, Stderr: &runErr, Getenv: func(k string) string {
			if k == "SYNCD_ADMIN_TOKEN" {
				return opsToken
			}
			return ""
		}}
		done <- m.Run(ctx, []string{"run", "--config", e.cfg})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v\n%s", err, runErr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("run did not stop")
		}
	}()
	// Wait for the first pass to be recorded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, err := e.main(context.Background(), opsToken, "status", "--config", e.cfg, "--json")
		if err == nil {
			var st admin.Status
			if json.Unmarshal([]byte(out), &st) == nil && st.Live && st.Connectors[0].LastRun != nil && !st.Connectors[0].LastRun.FinishedAt.IsZero() {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not up with a finished pass: %v %s\n%s", err, out, runErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	out := e.must("status", "--config", e.cfg)
	for _, want := range []string{"running since", "ready: state ok; workspace ok", "dead letters 1", "4 created"} {
		if !strings.Contains(out, want) {
			t.Errorf("live status lacks %q:\n%s", want, out)
		}
	}
	out = e.must("healthcheck", "--url", "http://"+e.listen+"/readyz")
	if !strings.Contains(out, `"ready":true`) {
		t.Errorf("healthcheck /readyz = %q", out)
	}
	if _, _, err := e.main(context.Background(), "", "healthcheck", "--url", "http://"+e.listen+"/nothing"); err == nil {
		t.Error("healthcheck of a 404 succeeded")
	}

	out = e.must("deadletters", "list", "--config", e.cfg)
	if !strings.Contains(out, "not an e-mail <script>") {
		t.Errorf("deadletters list through the daemon:\n%s", out)
	}
	id := e.deadLetterID()
	// The token is required to change state, and checked.
	if _, _, err := e.main(context.Background(), "wrong-token", "deadletters", "drop", id, "--config", e.cfg); !errors.Is(err, admin.ErrRefused) {
		t.Errorf("drop with a wrong token = %v, want refused", err)
	}
	if _, _, err := e.main(context.Background(), opsToken, "deadletters", "retry", id, "--config", e.cfg); err == nil || !strings.Contains(err.Error(), "failed again") {
		t.Errorf("retry through the daemon = %v, want failed again", err)
	}
	e.must("deadletters", "drop", id, "--config", e.cfg)
	if out = e.must("deadletters", "list", "--config", e.cfg); !strings.Contains(out, "no dead letters") {
		t.Errorf("list after drop through the daemon = %q", out)
	}

	// The conflict journal, read through the daemon that holds the file.
	if out = e.must("conflicts", "list", "--config", e.cfg); !strings.Contains(out, "no conflicts") {
		t.Errorf("conflicts list through the daemon = %q", out)
	}

	backup := filepath.Join(e.dir, "live-backup.db")
	out = e.must("state", "backup", "--config", e.cfg, backup)
	if !strings.Contains(out, "through the running daemon at "+e.listen) {
		t.Errorf("backup while running = %q", out)
	}
	checkBackupLinks(t, backup, 4)
	if _, _, err := e.main(context.Background(), "wrong-token", "state", "backup", "--config", e.cfg, filepath.Join(e.dir, "x.db")); !errors.Is(err, admin.ErrRefused) {
		t.Errorf("backup with a wrong token = %v, want refused", err)
	}
	checkScheduledBackup(t, e)

	// The metrics of the running daemon count the first pass.
	res, err := http.Get("http://" + e.listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var m bytes.Buffer
	_, _ = m.ReadFrom(res.Body)
	res.Body.Close()
	for _, want := range []string{`syncd_records_total{connector="crm",outcome="created"} 4`, `syncd_build_info{goversion=`, `version="dev"`} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Backing up before an upgrade, with the new binary, while the daemon is
// stopped: the file's older schema is copied as it is, not migrated.
func TestStateBackupOfAnOlderSchema(t *testing.T) {
	e := newOpsEnv(t)
	db, err := bolt.Open(e.state, 0o600, nil) // schema 0: no syncd bucket yet
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(e.state)
	backup := filepath.Join(e.dir, "pre-upgrade.db")
	out := e.must("state", "backup", "--config", e.cfg, backup)
	if !strings.Contains(out, "through a copy of the older state file") || !strings.Contains(out, "an older schema") {
		t.Errorf("backup of an older file = %q", out)
	}
	copied, _ := os.ReadFile(backup)
	if !bytes.Equal(copied, before) {
		t.Error("the backup differs from the older file")
	}
	if after, _ := os.ReadFile(e.state); !bytes.Equal(after, before) {
		t.Error("backing up changed (migrated?) the state file")
	}
}
