package pgtest

import (
	"context"
	"testing"
)

// TestSlotDropsSlotsLeftByAKilledRun: a slot and publication named for
// this test by an earlier run that never reached its cleanup are dropped
// when the test asks for its slot; another test's are not.
func TestSlotDropsSlotsLeftByAKilledRun(t *testing.T) {
	pool := Connect(t)
	left := Name(t, "syncd_")
	other := "syncd_other_test_000000000000"
	for _, name := range []string{left, other} {
		Exec(t, pool, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, name)
		Exec(t, pool, `CREATE PUBLICATION `+name)
	}
	t.Cleanup(func() {
		Exec(t, pool, `SELECT pg_drop_replication_slot($1)`, other)
		Exec(t, pool, `DROP PUBLICATION `+other)
	})
	Slot(t, pool)
	count := func(name string) (slots, pubs int) {
		ctx := context.Background()
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&slots); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_publication WHERE pubname = $1`, name).Scan(&pubs); err != nil {
			t.Fatal(err)
		}
		return slots, pubs
	}
	if s, p := count(left); s != 0 || p != 0 {
		t.Errorf("the left slot: %d slots, %d publications; want both dropped", s, p)
	}
	if s, p := count(other); s != 1 || p != 1 {
		t.Errorf("another test's slot: %d slots, %d publications; want both kept", s, p)
	}
}
