package reconcile

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// TestPostgresStreamPatchesTheRowAsItIsNow: a stream behind the table
// hands over old row images (issue 35, logical mode). With
// onSourceDelete: delete and app edits weighed, row 1 is edited, then its
// contact edited in the app, then the row deleted; the stream, read in
// batches of one, hands over the edit before the deletion. The row's old
// image is not patched over the app's newer edit, and the deletion weighs
// that edit (editAfterDelete, journaled). Before the fix the old image
// was patched: the app's edit was lost, and the deletion found the
// contact as the link last agreed it, so deleted it with no journal
// entry. Row 2, edited twice, is patched once, to its newest version.
func TestPostgresStreamPatchesTheRowAsItIsNow(t *testing.T) {
	e := newPGStream(t, 2, 1)
	e.r.opts.OnSourceDelete, e.r.opts.WeighAppEdits, e.r.opts.AllowMassDelete = policy.DeleteRemove, true, true
	if sum := e.run(); sum.Created != 2 {
		t.Fatalf("first pass: %v, want 2 created", sum)
	}
	l, ok, err := e.store.Links.Get("crm", "1")
	if err != nil || !ok {
		t.Fatalf("link of row 1: found %v, %v", ok, err)
	}
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'Row edit', updated_at = now() WHERE id = 1`)
	if _, err := e.ws.UpdateContact(context.Background(), l.ContactID,
		workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App edit")}}); err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, e.pool, `DELETE FROM `+e.table+` WHERE id = 1`)
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'First', updated_at = now() WHERE id = 2`)
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'Second', updated_at = now() WHERE id = 2`)
	before := e.emu.Stats()
	e.run()
	if _, patches, _ := e.writes(before); patches != 1 {
		t.Errorf("%d PATCHes, want 1 (row 2's newest version; none for the deleted row 1)", patches)
	}
	cfs, err := e.store.Conflicts.List("crm", 10)
	if err != nil {
		t.Fatal(err)
	}
	journaled := false
	for _, cf := range cfs {
		if cf.Kind == state.KindEditAfterDelete && cf.ContactID == l.ContactID && cf.Workspace["firstName"] == "App edit" {
			journaled = true
		}
	}
	if !journaled {
		t.Errorf("no editAfterDelete journal entry naming the app's edit of row 1's contact; journal %+v", cfs)
	}
	cs := e.contacts()
	if c, ok := cs["1"]; ok && deref(c.DefaultFields.FirstName) != "App edit" {
		t.Errorf("contact of the deleted row 1: firstName %q, want the app's newer edit or no contact", deref(c.DefaultFields.FirstName))
	}
	if got := deref(cs["2"].DefaultFields.FirstName); got != "Second" {
		t.Errorf("contact of row 2: firstName %q, want Second", got)
	}
}

// TestPostgresStreamMakesNoContactOfADeletedRowsImage: the write-back
// made a deleted row again for its contact, edited in the app after the
// deletion, and dropped the old row's link (editAfterDelete: edit-wins),
// before the stream, behind the table, hands over the old row's last
// image. That image makes no second contact for the person (before the
// fix it did: issue 35's soak, one person on two rows and two contacts).
func TestPostgresStreamMakesNoContactOfADeletedRowsImage(t *testing.T) {
	e := newPGStream(t, 2, 1)
	e.r.opts.OnSourceDelete, e.r.opts.WeighAppEdits, e.r.opts.AllowMassDelete = policy.DeleteRemove, true, true
	if sum := e.run(); sum.Created != 2 {
		t.Fatalf("first pass: %v, want 2 created", sum)
	}
	l, ok, err := e.store.Links.Get("crm", "1")
	if err != nil || !ok {
		t.Fatalf("link of row 1: found %v, %v", ok, err)
	}
	pgtest.Exec(t, e.pool, `UPDATE `+e.table+` SET name = 'Old image', updated_at = now() WHERE id = 1`)
	pgtest.Exec(t, e.pool, `DELETE FROM `+e.table+` WHERE id = 1`)
	// What the write-back does when it makes the row again (as row 3,
	// not in the table: the test's reconciler only reads).
	if _, err := e.ws.UpdateContact(context.Background(), l.ContactID, workspace.ContactPatch{ExternalID: workspace.Some("3")}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Links.Delete("crm", "1"); err != nil {
		t.Fatal(err)
	}
	before := e.emu.Stats()
	e.run()
	if posts, _, _ := e.writes(before); posts != 0 {
		t.Errorf("%d POSTs, want none: row 1 is gone, its contact linked elsewhere", posts)
	}
}
