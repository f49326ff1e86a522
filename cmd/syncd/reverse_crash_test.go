package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestKilledMidBurstAppliesEveryEventOnce builds syncd, runs it against
// an emulated workspace and a PostgreSQL table, and kills it with SIGKILL
// in the middle of a burst of app edits (the emulator delivering each as
// a webhook, retrying what fails). After a restart: the table holds the
// latest version of every contact, no version was written twice (an
// audit trigger logs every UPDATE) or after a newer one, no workspace
// edit was overwritten, and the inbox is empty.
func TestKilledMidBurstAppliesEveryEventOnce(t *testing.T) {
	const rows, versions = 40, 8
	pool := pgtest.Connect(t)
	schema := pgtest.NewSchema(t, pool)
	table := schema + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (id bigserial PRIMARY KEY, first_name text, last_name text, email text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `CREATE TABLE `+schema+`.audit (n bigserial PRIMARY KEY, id bigint, last_name text)`)
	pgtest.Exec(t, pool, `CREATE FUNCTION `+schema+`.touch() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN NEW.updated_at = clock_timestamp(); RETURN NEW; END $$`)
	pgtest.Exec(t, pool, `CREATE TRIGGER touch BEFORE UPDATE ON `+table+` FOR EACH ROW EXECUTE FUNCTION `+schema+`.touch()`)
	pgtest.Exec(t, pool, `CREATE FUNCTION `+schema+`.audit() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN INSERT INTO `+schema+`.audit (id, last_name) VALUES (NEW.id, NEW.last_name); RETURN NULL; END $$`)
	pgtest.Exec(t, pool, `CREATE TRIGGER audit AFTER UPDATE ON `+table+` FOR EACH ROW EXECUTE FUNCTION `+schema+`.audit()`)
	pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name, last_name, email)
		SELECT 'First' || i, 'Last' || i, 'p' || i || '@example.com' FROM generate_series(1, $1::int) AS i`, rows)

	emu := emulator.NewServer(emulator.Options{Rate: -1, RetryBase: 50 * time.Millisecond, RetryMax: 300 * time.Millisecond, MaxAttempts: 200})
	defer emu.Close()

	dir := t.TempDir()
	bin := filepath.Join(dir, "syncd")
	start := time.Now()
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built syncd in %v", time.Since(start).Round(time.Millisecond))

	port := freePort(t)
	hook := fmt.Sprintf("http://127.0.0.1:%d/hooks", port)
	statePath := filepath.Join(dir, "syncd.db")
	cfgPath := filepath.Join(dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: statePath},
		Webhooks:  configfile.Webhooks{Listen: fmt.Sprintf("127.0.0.1:%d", port), Path: "/hooks", PublicURL: hook, AutoRegister: true},
		Log:       configfile.Log{Level: "info"},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres", Direction: policy.Both, Schedule: "@every 1h",
			Settings: map[string]any{"dsn": pgtest.URL(), "table": table, "changes": "poll"},
			Mapping:  configfile.Names(),
		}},
	}
	if err := f.Write(cfgPath); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "syncd.log")
	run := func() *exec.Cmd {
		f, err := os.OpenFile(logs, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "--config", cfgPath)
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_, _ = cmd.Process.Wait()
			}
			f.Close()
		})
		return cmd
	}
	dumpLogs := func() {
		b, _ := os.ReadFile(logs)
		t.Logf("syncd logs:\n%s", b)
	}
	waitFor := func(what string, timeout time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for !ok() {
			if time.Now().After(deadline) {
				dumpLogs()
				t.Fatalf("timed out after %v waiting for %s", timeout, what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	cmd := run()
	waitFor("the first forward pass", 20*time.Second, func() bool {
		b, _ := os.ReadFile(logs)
		return strings.Contains(string(b), "sync pass finished") && len(emu.Contacts()) == rows &&
			len(emu.Webhooks()) == 1 && receiverUp(hook)
	})
	contacts := emu.Contacts()
	api := &emuAPI{t, emu.URL}

	// The burst: versions rounds of edits of every contact, syncd killed
	// in the middle, once it has written some back, the rest made while it
	// is down.
	edits := 0
	var killedAt time.Time
	for v := 1; v <= versions; v++ {
		for _, c := range contacts {
			api.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{
				LastName: workspace.Some(fmt.Sprintf("%s-v%d", *c.ExternalID, v))}})
			edits++
			time.Sleep(2 * time.Millisecond)
			if killedAt.IsZero() && edits >= 100 && edits%5 == 0 && auditCount(t, pool, schema) >= 20 {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				_ = cmd.Wait()
				killedAt = time.Now()
			}
		}
	}
	if killedAt.IsZero() {
		dumpLogs()
		t.Fatalf("syncd wrote back %d rows during the whole burst: it was never killed", auditCount(t, pool, schema))
	}
	wh := emu.Webhooks()[0]
	acked := 0
	for _, d := range emu.Deliveries(wh.ID) {
		if d.Status == emulator.DeliveryDelivered && d.UpdatedAt.Before(killedAt) {
			acked++
		}
	}
	applied := auditCount(t, pool, schema)
	t.Logf("killed mid-burst: %d deliveries acknowledged, %d rows written back so far", acked, applied)
	if acked == 0 || applied == 0 {
		t.Fatal("the kill came before syncd applied anything: the test proves nothing")
	}

	cmd = run()
	want := map[int64]string{}
	for _, c := range emu.Contacts() {
		var id int64
		fmt.Sscan(*c.ExternalID, &id)
		want[id] = *c.DefaultFields.LastName
	}
	waitFor("every delivery and the table at the latest versions", 30*time.Second, func() bool {
		for _, d := range emu.Deliveries(wh.ID) {
			if d.Status != emulator.DeliveryDelivered {
				return false
			}
		}
		got := lastNames(t, pool, table)
		for id, w := range want {
			if got[id] != w {
				return false
			}
		}
		return true
	})
	// Let the forward pass of the restart run, then stop syncd cleanly.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			dumpLogs()
			t.Fatalf("syncd exited with %v after SIGTERM", err)
		}
	case <-time.After(15 * time.Second):
		dumpLogs()
		t.Fatal("syncd did not stop within 15s of SIGTERM")
	}

	// No version written twice, none after a newer one.
	rowsQ, err := pool.Query(context.Background(), "SELECT id, last_name FROM "+schema+".audit ORDER BY n")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	last := map[int64]int{}
	total := 0
	for rowsQ.Next() {
		var id int64
		var name string
		if err := rowsQ.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		total++
		if seen[name] {
			t.Errorf("version %s written twice", name)
		}
		seen[name] = true
		var v int
		if i := strings.LastIndex(name, "-v"); i >= 0 {
			fmt.Sscan(name[i+2:], &v)
		}
		if v <= last[id] {
			t.Errorf("row %d: version %d written after version %d", id, v, last[id])
		}
		last[id] = v
	}
	rowsQ.Close()
	for id, w := range want {
		if !seen[w] {
			t.Errorf("row %d: latest version %s never written", id, w)
		}
	}
	// The workspace kept every latest edit (no forward pass sent an
	// older row over it), and holds no duplicate.
	for _, c := range emu.Contacts() {
		var id int64
		fmt.Sscan(*c.ExternalID, &id)
		if *c.DefaultFields.LastName != fmt.Sprintf("%d-v%d", id, versions) {
			t.Errorf("contact %s holds %s, want version %d", c.ID, *c.DefaultFields.LastName, versions)
		}
	}
	if n := len(emu.Contacts()); n != rows {
		t.Errorf("%d contacts, want %d", n, rows)
	}
	st, err := state.Open(statePath, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n, _ := st.Inbox.Count(); n != 0 {
		t.Errorf("%d events left in the inbox", n)
	}
	if dls, _ := st.DeadLetters.List("db"); len(dls) != 0 {
		t.Errorf("dead letters: %+v", dls)
	}
	t.Logf("%d edits, %d UPDATEs written back in all (versions coalesced per round), %d deliveries",
		rows*versions, total, len(emu.Deliveries(wh.ID)))
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func receiverUp(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusMethodNotAllowed
}

func lastNames(t *testing.T, pool *pgxpool.Pool, table string) map[int64]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "SELECT id, coalesce(last_name, '') FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			t.Fatal(err)
		}
		out[id] = name
	}
	return out
}

func auditCount(t *testing.T, pool *pgxpool.Pool, schema string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".audit").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
