package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestPGReverseMassDeleteIsHeld is issue 23's "half of the linked
// contacts deleted in the app (onWorkspaceDelete: delete)": before, 600
// of 1,200 rows (and 20 of 40) were deleted in the table with no guard.
// Now the write-back deletes at most massDeleteThreshold (10%) of the
// links within the window and holds the rest as a plan, which the
// operator approves (the rows go) or drops (the rows stay).
func TestPGReverseMassDeleteIsHeld(t *testing.T) {
	for _, tc := range []struct {
		name            string
		rows, deleted   int
		approve         bool
		wantRowsAtLeast int // after the deletions, before the operator
	}{
		{"1,200 rows, 600 deleted in the app, approved", 1200, 600, true, 1200 - 120},
		{"40 rows, 20 deleted in the app, dropped", 40, 20, false, 40 - 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newPGEnvWith(t, tc.rows, emulator.Options{}, 500, func(c *configfile.Connector) {
				c.OnWorkspaceDelete = policy.DeleteRemove
			})
			ctx := context.Background()
			app := emutest.NewApp(t, e.emu.URL)
			for id := 1; id <= tc.deleted; id++ {
				app.Delete(e.contactOf(2 * id).ID) // every other row
			}
			e.waitQuiet(2 * time.Minute)

			rows := e.count()
			held, err := e.d.HeldDeletes("db")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d of %d contacts deleted in the app: %d rows deleted, %d deletions held", tc.deleted, tc.rows, tc.rows-rows, len(held))
			if rows < tc.wantRowsAtLeast {
				t.Fatalf("%d of %d rows left, want at least %d: the guard let more than 10%% of the links be deleted", rows, tc.rows, tc.wantRowsAtLeast)
			}
			if got := tc.rows - rows + len(held); got != tc.deleted {
				t.Fatalf("%d rows deleted + %d held = %d, want the %d deletions accounted for", tc.rows-rows, len(held), got, tc.deleted)
			}

			if tc.approve {
				n, err := e.d.ApproveHeldDeletes(ctx, "db")
				if err != nil || n != len(held) {
					t.Fatalf("approve: %d, %v; want %d", n, err, len(held))
				}
				if got := e.count(); got != tc.rows-tc.deleted {
					t.Errorf("after approving: %d rows, want %d", got, tc.rows-tc.deleted)
				}
			} else {
				n, err := e.d.DropHeldDeletes("db")
				if err != nil || n != len(held) {
					t.Fatalf("drop: %d, %v; want %d", n, err, len(held))
				}
				if got := e.count(); got != rows {
					t.Errorf("after dropping: %d rows, want the %d left", got, rows)
				}
			}
			if left, _ := e.d.HeldDeletes("db"); len(left) != 0 {
				t.Errorf("%d deletions still held", len(left))
			}
			links, err := e.d.Store().Links.Count("db")
			if err != nil || links != tc.rows-tc.deleted {
				t.Errorf("%d links (%v), want %d: the deleted contacts' links go either way", links, err, tc.rows-tc.deleted)
			}
		})
	}
}

// count returns the table's row count.
func (e *pgEnv) count() int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), fmt.Sprintf("SELECT count(*) FROM %s", e.table)).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}
