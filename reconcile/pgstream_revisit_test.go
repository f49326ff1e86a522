package reconcile

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// TestStreamedRevisitIsNotWeighedAhead: the write-back asked the pass to
// read row 1 again (state.Revisit) while the pass was behind the stream.
// By the time the pass reads it, the row's name was edited, then the app
// edited the first name, then the row's notes: the row read for the
// revisit has no stream times, and its updated_at is the notes' edit,
// later than the app's. Weighed at it, the row's older name beat the
// app's newer one on both sides (issue 35: the logical hour-long soak at
// 468a4df, a last name 6.3 s older than the app's edit, weighed at a
// first-name edit 1.7 s after it). The name is left to the stream's
// version that made it, and the app's edit wins.
func TestStreamedRevisitIsNotWeighedAhead(t *testing.T) {
	e := newPGStreamOf(t, 1, 1, "both")
	e.r.opts.WeighAppEdits = true
	if sum := e.run(); sum.Created != 1 {
		t.Fatalf("first pass: %v, want 1 created", sum)
	}
	l, ok, err := e.store.Links.Get("crm", "1")
	if err != nil || !ok {
		t.Fatalf("link of row 1: found %v, %v", ok, err)
	}
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'Row name', updated_at = clock_timestamp() WHERE id = 1`)
	passMillisecond(t)
	if _, err := e.ws.UpdateContact(context.Background(), l.ContactID,
		workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App name")}}); err != nil {
		t.Fatal(err)
	}
	passMillisecond(t)
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET notes = 'Row notes 2', updated_at = clock_timestamp() WHERE id = 1`)
	if err := e.store.Reverse.Commit(state.ReverseCommit{Revisit: []state.Revisit{{Connector: "crm", RecordID: "1"}}}); err != nil {
		t.Fatal(err)
	}
	e.run()
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
	if rs, err := e.store.Reverse.Revisits("crm"); err != nil || len(rs) != 0 {
		t.Errorf("revisits left %v (%v), want none", rs, err)
	}
}
