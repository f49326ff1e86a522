package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestPGAppEditReachesTableDuringALongForwardPass: the write-back does
// not wait behind a forward pass. While a pass of many batches goes on
// against a slow workspace, an edit made in the app reaches the table
// within 2 seconds; when the pass ends, both sides agree: the pass did
// not send the row's older copy back over the edit, and it brought every
// change of the table over.
func TestPGAppEditReachesTableDuringALongForwardPass(t *testing.T) {
	const rows = 240
	e := newPGEnvBatch(t, rows, emulator.Options{}, 10)
	ctx := context.Background()
	edited := e.contactOf(rows)
	// Every row changes at the source: the next pass patches each
	// contact, 10 rows a batch, each call 100 ms (about 6 s with the
	// connector's 4 workers).
	e.ownUpdate("UPDATE " + e.table + " SET first_name = 'New' || id")
	e.emu.SetLatency(100 * time.Millisecond)
	type result struct {
		sums []reconcile.Summary
		err  error
	}
	passDone := make(chan result, 1)
	go func() {
		sums, err := e.d.RunOnce(ctx)
		passDone <- result{sums, err}
	}()
	for e.emu.Stats().Requests["PATCH /v1/contacts/{id}"] < 20 {
		time.Sleep(5 * time.Millisecond)
	}

	start := time.Now()
	e.appPatch(edited.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited")}})
	for e.column(rows, "last_name") != "Edited" {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the edit did not reach the table within 2s of a forward pass in progress (last_name %q)", e.column(rows, "last_name"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	select {
	case <-passDone:
		t.Fatal("the forward pass ended before the edit arrived: it did not run long enough to test anything")
	default:
	}
	t.Logf("app edit reached the table in %v, during a forward pass in progress", took.Round(time.Millisecond))

	res := <-passDone
	if res.err != nil || res.sums[0].Updated != rows || res.sums[0].Failed != 0 {
		t.Fatalf("forward pass: %v %v, want %d updated", res.sums, res.err, rows)
	}
	e.emu.SetLatency(0)
	e.waitQuiet(10 * time.Second)
	for id := 1; id <= rows; id++ {
		c := e.contactOf(id)
		want := "Last" + fmt.Sprint(id)
		if id == rows {
			want = "Edited"
		}
		if got := str(c.DefaultFields.FirstName); got != "New"+fmt.Sprint(id) {
			t.Errorf("contact of row %d: firstName %q, want New%d", id, got, id)
		}
		if got := str(c.DefaultFields.LastName); got != want {
			t.Errorf("contact of row %d: lastName %q, want %q", id, got, want)
		}
		if got := e.column(id, "last_name"); got != want {
			t.Errorf("row %d: last_name %q, want %q", id, got, want)
		}
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
