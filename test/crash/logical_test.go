package crash

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestKillWhileStreaming syncs a table through logical replication and
// kills `syncd run --once` (SIGKILL) at random moments while it streams
// edits, inserts and hard deletes made in transactions of many rows, then
// lets one run finish: one contact per live row, every field equal, none
// for a deleted row (0 duplicates, 0 lost), and a rerun writes nothing.
func TestKillWhileStreaming(t *testing.T) {
	pool := pgtest.Connect(t)
	var level string
	if err := pool.QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil || level != "logical" {
		t.Fatalf("the test server runs with wal_level=%s (%v); run scripts/test --prepare-only to set wal_level=logical", level, err)
	}
	slot := pgtest.Name(t, "syncd_")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for range 100 {
			if _, err := pool.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond) // a killed walsender may still be ending
		}
		_, _ = pool.Exec(ctx, `DROP PUBLICATION IF EXISTS `+slot)
	})
	w := newForwardWorldIn(t, e2e.PostgreSQL, 1200, 400, map[string]any{"changes": "logical", "slot": slot})
	w.killWhileStreaming(t)
}

// killWhileStreaming runs the first sync, then kills `syncd run --once`
// at random moments while it streams, each time after 300 edits (in
// transactions of 150 and 50 rows), 20 inserts and a DELETE of 5 rows;
// then one run finishes: both sides agree, and an unchanged rerun writes
// nothing.
func (w *forwardWorld) killWhileStreaming(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewSource(*seed))
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	w.converged(t, "after the first sync")

	hit, midStream := 0, 0
	for k := range *kills {
		// 300 edits: one transaction of 150 rows (spanning batches, no
		// checkpoint inside it) and three of 50 (checkpoints between them).
		for _, n := range []int{150, 50, 50, 50} {
			w.table.Exec(fmt.Sprintf(`UPDATE %s SET last_name = CONCAT('Last', id, '-k%d') WHERE id IN (%s)`,
				w.table.Name, k, w.liveIDs(rng, n)))
		}
		for i := range 20 {
			w.table.Insert(row(10000+k*100+i, ""))
		}
		w.table.Exec(fmt.Sprintf(`DELETE FROM %s WHERE id IN (%s)`, w.table.Name, w.liveIDs(rng, 5)))
		ideal := time.Duration(float64(330) / w.rate * float64(time.Second))
		before := w.emu.Stats()
		if killAtRandom(t, rng, 20*time.Millisecond, max(ideal, 100*time.Millisecond), "run", "--once", "--config", w.cfg) {
			hit++
			// Mid-stream: it had written some of the changes, not all.
			if writes(before, w.emu.Stats()) > 0 && len(e2e.Agree(w.table.Rows(), w.emu.Contacts())) > 0 {
				midStream++
			}
		}
	}
	if hit == 0 || midStream == 0 {
		t.Fatalf("of %d kills that hit a running syncd, %d landed after its first write and before its last: the test proves nothing", hit, midStream)
	}
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	w.converged(t, fmt.Sprintf("after %d kills while streaming and one complete run", hit))

	before := w.emu.Stats()
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	after := w.emu.Stats()
	for _, route := range []string{"POST /v1/contacts", "PATCH /v1/contacts/{id}", "DELETE /v1/contacts/{id}"} {
		if n := after.Requests[route] - before.Requests[route]; n != 0 {
			t.Errorf("unchanged rerun after the crashes: %d %s", n, route)
		}
	}
	t.Logf("%d kills hit while streaming (%d between its first and last write); %d creates in all", hit, midStream, after.Requests["POST /v1/contacts"])
}

// writes counts the workspace writes between two of the emulator's stats.
func writes(before, after emulator.Stats) int {
	n := 0
	for _, route := range []string{"POST /v1/contacts", "PATCH /v1/contacts/{id}", "DELETE /v1/contacts/{id}"} {
		n += after.Requests[route] - before.Requests[route]
	}
	return n
}

// liveIDs picks n of the table's rows at random, as an id list.
func (w *forwardWorld) liveIDs(rng *rand.Rand, n int) string {
	var ids []string
	for _, r := range w.table.Rows() {
		if !r.Deleted {
			ids = append(ids, fmt.Sprint(r.ID))
		}
	}
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return strings.Join(ids[:min(n, len(ids))], ", ")
}
