package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/workspace"
)

// TestStreamCopyReadAgainIsNotWeighedAhead: a stream behind the table
// hands over an old image of row 1 (its notes edited); read again, the
// row holds a newer name too, edited before an app edit of the first
// name, and a newer notes edit after it, which moved the row's
// updated_at past the app's edit. The name's own version, with its own
// time, is still to come in the stream: weighed now, at the row's
// updated_at, the row's older name beat the app's newer one on both
// sides (issue 35: the binlog soak, seed 5, an app edit 4.7 s after the
// table's, journaled as lost). The pass leaves the name for the version
// that made it, and the app's edit wins.
func TestStreamCopyReadAgainIsNotWeighedAhead(t *testing.T) {
	e, contactID := newWeighingStream(t)
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET notes = 'Row notes', updated_at = clock_timestamp() WHERE id = 1`)
	e.nameEditedAroundTheApps(contactID)
	e.run()
	e.appNameWon()
}

// newWeighingStream is newPGStreamOf one row both ways, weighing app
// edits, after the first pass made its contact, whose id it returns.
func newWeighingStream(t *testing.T) (*pgStream, string) {
	t.Helper()
	e := newPGStreamOf(t, 1, 1, "both")
	e.r.opts.WeighAppEdits = true
	if sum := e.run(); sum.Created != 1 {
		t.Fatalf("first pass: %v, want 1 created", sum)
	}
	l, ok, err := e.store.Links.Get("crm", "1")
	if err != nil || !ok {
		t.Fatalf("link of row 1: found %v, %v", ok, err)
	}
	return e, l.ContactID
}

// nameEditedAroundTheApps edits row 1's name, then the app the first
// name of its contact, then the row's notes: the row's updated_at is
// later than the app's edit, its name older.
func (e *pgStream) nameEditedAroundTheApps(contactID string) {
	t := e.t
	t.Helper()
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'Row name', updated_at = clock_timestamp() WHERE id = 1`)
	passMillisecond(t)
	if _, err := e.ws.UpdateContact(context.Background(), contactID,
		workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App name")}}); err != nil {
		t.Fatal(err)
	}
	passMillisecond(t)
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET notes = 'Row notes 2', updated_at = clock_timestamp() WHERE id = 1`)
}

// appNameWon checks that the contact holds the app's first name and the
// row's last notes, and that no conflict was won by the row.
func (e *pgStream) appNameWon() {
	t := e.t
	t.Helper()
	c := e.contacts()["1"]
	if got := deref(c.DefaultFields.FirstName); got != "App name" {
		t.Errorf("contact's firstName %q, want the app's edit, newer than the row's", got)
	}
	if got := deref(c.DefaultFields.Company); got != "Row notes 2" {
		t.Errorf("contact's company %q, want the row's last notes", got)
	}
	cfs, err := e.store.Conflicts.List("crm", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, cf := range cfs {
		if cf.Winner == "crm" {
			t.Errorf("conflict won by the row: %+v", cf)
		}
	}
}

// passMillisecond returns once the clock is a millisecond later (the
// workspace keeps times to the millisecond): an edit made next is later
// than the one made before.
func passMillisecond(t *testing.T) {
	t.Helper()
	until := time.Now().Add(time.Millisecond)
	for time.Now().Before(until) {
		time.Sleep(100 * time.Microsecond)
	}
}
