package crash

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
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
	rng := rand.New(rand.NewSource(*seed))
	pool := pgtest.Connect(t)
	var level string
	if err := pool.QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil || level != "logical" {
		t.Fatalf("the test server runs with wal_level=%s (%v); run scripts/test --prepare-only to set wal_level=logical", level, err)
	}
	const rows, rate = 1200, 400.0
	w := &forwardWorld{table: e2e.NewTable(t), rows: rows, rate: rate}
	w.table.InsertN(rows, func(i int) e2e.Values { return row(i, "") })
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
	w.emu = emulator.NewServer(emulator.Options{Rate: rate, Burst: 20, Latency: 2 * time.Millisecond, Seed: *seed})
	t.Cleanup(w.emu.Close)
	dir := t.TempDir()
	w.cfg = e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: w.emu.URL, Table: w.table.Name, StatePath: filepath.Join(dir, "syncd.db"),
		RateLimit: rate, Burst: 20, Direction: "to-workspace", BatchSize: 100, Workers: 4, LogLevel: "warn",
		Settings: map[string]any{"changes": "logical", "slot": slot},
	})
	runOK(t, time.Minute, "run", "--once", "--config", w.cfg)
	w.converged(t, "after the first sync")

	hit := 0
	for k := range *kills {
		// One transaction of 300 edits, inserts, and hard deletes.
		tx := fmt.Sprintf("k%d", k)
		pgtest.Exec(t, pool, fmt.Sprintf(`UPDATE %s SET last_name = 'Last' || id || '-%s' WHERE id IN (SELECT id FROM %s ORDER BY random() LIMIT 300)`,
			w.table.Name, tx, w.table.Name))
		for i := range 20 {
			w.table.Insert(row(10000+k*100+i, ""))
		}
		pgtest.Exec(t, pool, fmt.Sprintf(`DELETE FROM %s WHERE id IN (SELECT id FROM %s ORDER BY random() LIMIT 5)`, w.table.Name, w.table.Name))
		ideal := time.Duration(float64(330) / rate * float64(time.Second))
		if killAtRandom(t, rng, 20*time.Millisecond, max(ideal, 100*time.Millisecond), "run", "--once", "--config", w.cfg) {
			hit++
		}
	}
	if hit == 0 {
		t.Fatalf("no kill hit a running syncd: the test proves nothing")
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
	t.Logf("%d kills hit while streaming; %d creates in all", hit, after.Requests["POST /v1/contacts"])
}
