package daemon_test

import (
	"context"
	"errors"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/reconcile"
)

// TestMySQLBinlogMassDeleteGuarded: a mass DELETE arrives through the
// binlog as rows and meets the mass-delete guard: the pass is refused,
// every contact kept, and the next pass is refused again (the deletions
// neither applied nor skipped past).
func TestMySQLBinlogMassDeleteGuarded(t *testing.T) {
	e := newBinlogEnv(t, 40)
	if _, err := e.d.RunOnce(context.Background()); err != nil || len(e.names()) != 40 {
		t.Fatalf("first pass: %v, %d contacts, want 40", err, len(e.names()))
	}
	mysqltest.Exec(t, e.db, `DELETE FROM contacts WHERE id > 5`)
	for pass := range 2 {
		if _, err := e.d.RunOnce(context.Background()); !errors.Is(err, reconcile.ErrMassDelete) {
			t.Fatalf("pass %d after deleting 35 of 40 rows: %v, want the mass-delete guard", pass, err)
		}
		if n := len(e.names()); n != 40 {
			t.Fatalf("pass %d: %d contacts, want the 40 kept", pass, n)
		}
	}
}
