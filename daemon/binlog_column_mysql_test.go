package daemon_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestMySQLBinlogColumnDropped: a mapped column dropped from the table
// mid-stream is a connector error that names it in status and on the
// health page, pass after pass (no crash, no loop of resyncs), and
// nothing is deleted or emptied in the workspace.
func TestMySQLBinlogColumnDropped(t *testing.T) {
	e := newBinlogEnv(t, 5)
	ctx := context.Background()
	if _, err := e.d.RunOnce(ctx); err != nil || len(e.names()) != 5 {
		t.Fatalf("first pass: %v, %d contacts, want 5", err, len(e.names()))
	}
	mysqltest.Exec(t, e.db, `UPDATE contacts SET first_name = 'Before' WHERE id = 1`)
	mysqltest.Exec(t, e.db, `ALTER TABLE contacts DROP COLUMN last_name`)
	mysqltest.Exec(t, e.db, `UPDATE contacts SET first_name = 'After' WHERE id = 2`)
	before := e.emu.Stats()
	for pass := range 2 {
		if _, err := e.d.RunOnce(ctx); !errors.Is(err, mysql.ErrColumnGone) || !strings.Contains(err.Error(), "last_name") {
			t.Fatalf("pass %d after DROP COLUMN last_name: %v, want the column gone, named", pass, err)
		}
		cs := e.status(t)
		if r := cs.LastRun; r == nil || r.Kind != "run" || !strings.Contains(r.Err, "last_name") {
			t.Errorf("pass %d: status last run %+v, want the error naming last_name", pass, r)
		}
	}
	// The change before the ALTER arrived; none after it; nothing gone.
	checkNames(t, e.names(), []string{"Before Last1", "First2 Last2"}, []string{"After Last2", "After "}, 5)
	after := e.emu.Stats()
	if n := after.Requests["DELETE /v1/contacts/{id}"] - before.Requests["DELETE /v1/contacts/{id}"]; n != 0 {
		t.Errorf("%d contacts deleted after the column went", n)
	}
	if n := after.Requests["PATCH /v1/contacts/{id}"] - before.Requests["PATCH /v1/contacts/{id}"]; n != 1 {
		t.Errorf("%d contacts patched, want 1 (the change before the ALTER)", n)
	}

	if page := healthPage(t, e.d); !strings.Contains(page, `<span class="reason err">`) || !strings.Contains(page, "last_name") {
		t.Errorf("the health page does not show the connector's error naming last_name:\n%s", page)
	}
}
