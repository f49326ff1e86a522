package daemon_test

import (
	"context"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/state"
)

// TestMySQLBinlogPurgedResync: the binlog the checkpoint needs is gone
// while syncd was stopped (simulated by a checkpoint older than the
// server's first binlog, or holding a GTID no binlog holds: purging the
// shared server's binlogs would break other tests). The daemon's next
// pass notices, resyncs the connector by itself (the edits made while it
// was stopped arrive, nothing is deleted), says so in status, and then
// streams again from the resync's snapshot.
func TestMySQLBinlogPurgedResync(t *testing.T) {
	first := firstBinlog(t)
	base := first[:strings.LastIndexByte(first, '.')]
	for _, tc := range []struct {
		name, checkpoint, says string
	}{
		{"file older than the first binlog", `{"binlog":"` + base + `.000000","pos":4}`, "was purged"},
		{"GTID no binlog holds", `{"binlog":"` + base + `.000000","pos":4,"gtid":"0-1-0,4000000-1-1","flavor":"mariadb"}`, "resync needed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newBinlogEnv(t, 20)
			if _, err := e.d.RunOnce(context.Background()); err != nil || len(e.names()) != 20 {
				t.Fatalf("first pass: %v, %d contacts, want 20", err, len(e.names()))
			}
			e.close(t)
			st, err := state.Open(e.statePath, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Checkpoints.Set("shop", "", tc.checkpoint); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			// Edits while syncd is stopped.
			mysqltest.Exec(t, e.db, `UPDATE contacts SET first_name = 'Changed' WHERE id = 3`)
			mysqltest.Exec(t, e.db, `INSERT INTO contacts (id, first_name, last_name) VALUES (50, 'While', 'Stopped')`)

			e.open(t)
			before := e.emu.Stats()
			if _, err := e.d.RunOnce(context.Background()); err != nil {
				t.Fatalf("pass from a purged position: %v, want a resync by itself that succeeds", err)
			}
			checkNames(t, e.names(), []string{"Changed Last3", "While Stopped", "First20 Last20"}, []string{"First3 Last3"}, 21)
			if n := e.emu.Stats().Requests["DELETE /v1/contacts/{id}"] - before.Requests["DELETE /v1/contacts/{id}"]; n != 0 {
				t.Errorf("the resync deleted %d contacts, want none", n)
			}
			cs := e.status(t)
			if !strings.HasPrefix(cs.Notice, "resynced by itself at ") || !strings.Contains(cs.Notice, tc.says) {
				t.Errorf("status notice %q, want \"resynced by itself at ...\" saying %q", cs.Notice, tc.says)
			}
			if page := healthPage(t, e.d); !strings.Contains(page, `<span class="reason notice">resynced by itself at `) {
				t.Errorf("the health page does not show the notice:\n%s", page)
			}

			// The checkpoint is the resync's position at once: a daemon
			// started again (run --once) streams, with no other resync.
			if cp := cs.Checkpoints[""]; cp == tc.checkpoint || !strings.Contains(cp, `"binlog":"`+base) {
				t.Errorf("checkpoint after the resync %q, want the position of the resync's snapshot", cp)
			}
			e.close(t)
			e.open(t)
			if _, err := e.d.RunOnce(context.Background()); err != nil {
				t.Fatalf("pass of a daemon started again after the resync: %v", err)
			}
			if cs := e.status(t); cs.Notice != "" || cs.LastRun == nil || cs.LastRun.Kind != "run" {
				t.Errorf("a daemon started again after the resync: notice %q, last run %+v; want a plain streaming pass", cs.Notice, cs.LastRun)
			}

			// The stream goes on from the resync's snapshot: a pass, no
			// other resync.
			mysqltest.Exec(t, e.db, `UPDATE contacts SET last_name = 'Streamed' WHERE id = 4`)
			if _, err := e.d.RunOnce(context.Background()); err != nil {
				t.Fatalf("pass after the resync: %v", err)
			}
			checkNames(t, e.names(), []string{"First4 Streamed"}, []string{"First4 Last4"}, 21)
			cs = e.status(t)
			if r := cs.LastRun; r == nil || r.Kind != "run" || r.Err != "" {
				t.Errorf("last run after the resync %+v, want a streaming run", r)
			}
			if cp := cs.Checkpoints[""]; cp == tc.checkpoint || !strings.Contains(cp, `"binlog":"`+base) {
				t.Errorf("checkpoint after the streaming run %q, want a position the server has", cp)
			}
		})
	}
}

// status is the connector's status in the daemon's.
func (e *binlogEnv) status(t *testing.T) admin.ConnectorStatus {
	t.Helper()
	st, err := e.d.Status(context.Background())
	if err != nil || len(st.Connectors) != 1 {
		t.Fatalf("status: %v, %+v", err, st)
	}
	return st.Connectors[0]
}

// firstBinlog is the name of the oldest binlog file the server keeps.
func firstBinlog(t *testing.T) string {
	t.Helper()
	var first string
	if err := mysqltest.Connect(t).QueryRow("SHOW BINARY LOGS").Scan(&first, new(any)); err != nil {
		t.Fatalf("SHOW BINARY LOGS (the test server needs log_bin: scripts/test --prepare-only): %v", err)
	}
	return first
}
