package reverse

import (
	"testing"
	"time"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// madeInApp sets up a contact made in the app whose record the write-back
// made (r9) but had not linked yet: the linking PATCH retried under
// faults, or a restart between the two. The record's updated_at is now.
func (e *env) madeInApp() workspace.Contact {
	e.t.Helper()
	c := e.appCreate("Rita", "Resume", "rita@example.com")
	e.mem.put("r9", map[string]any{"id": "r9", "first_name": "Rita", "last_name": "Resume", "email": "rita@example.com"})
	e.mem.setUpdatedAt("r9", time.Now())
	if err := e.store.Reverse.PutPending(state.PendingCreate{Connector: "mem", ContactID: c.ID, RecordID: "r9",
		ContactUpdatedAt: c.UpdatedAt, Fields: map[string]string{"firstName": "Rita", "lastName": "Resume", "emails.work": "rita@example.com"}}); err != nil {
		e.t.Fatal(err)
	}
	return c
}

// bothHold checks that the contact and the record of ext both hold
// first and last (first and last names).
func (e *env) bothHold(ext, first, last string) {
	e.t.Helper()
	c := e.contact(ext)
	rec := e.mem.get(ext)
	if *c.DefaultFields.FirstName != first || rec.Fields["first_name"] != first {
		e.t.Errorf("first name: contact %q, record %v; want %q on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"], first)
	}
	if *c.DefaultFields.LastName != last || rec.Fields["last_name"] != last {
		e.t.Errorf("last name: contact %q, record %v; want %q on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"], last)
	}
}

// laterThan waits until the clock is past at by 2 ms: the app's
// updatedAt has milliseconds.
func laterThan(at time.Time) {
	for !time.Now().After(at.Add(2 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
}

// tableEdit edits the record r9 as a person in its system does, now.
func (e *env) tableEdit(fields map[string]any) time.Time {
	e.t.Helper()
	e.mem.put("r9", fields)
	at := time.Now()
	e.mem.setUpdatedAt("r9", at)
	return at
}

// TestPassLeavesARecordBeingMadeToTheWriteBack: the pass reads the
// record the write-back made for a contact of the app before its link
// is stored. Looked up by externalId it found nothing, and the pass made
// a second contact for the same person. It leaves the record to the
// write-back, which links it and asks for it to be read again: the
// table's edit made before the link, which the pass's checkpoint has
// passed, still reaches the contact.
func TestPassLeavesARecordBeingMadeToTheWriteBack(t *testing.T) {
	e := createEnv(t)
	c := e.madeInApp()
	e.tableEdit(map[string]any{"first_name": "Table"})
	if sum := e.forward(); sum.Created != 0 || sum.Updated != 0 {
		t.Fatalf("forward pass before the link: %v, want the record left to the write-back", sum)
	}
	if n := len(e.emu.Contacts()); n != 1 {
		t.Fatalf("workspace holds %d contacts, want the app's one", n)
	}
	e.event("created", workspace.EventContactUpdated, c)
	e.drain()
	if l := e.link("r9"); l.ContactID != c.ID {
		t.Fatalf("link %+v, want the app's contact", l)
	}
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass after the link: %v, want the table's edit patched", sum)
	}
	if got := *e.contact("r9").DefaultFields.FirstName; got != "Table" {
		t.Errorf("contact's firstName = %q, want the table's edit", got)
	}
	if got := e.mem.get("r9").Fields["first_name"]; got != "Table" {
		t.Errorf("record's first_name = %v, want the table's edit", got)
	}
	if n := len(e.emu.Contacts()); n != 1 {
		t.Errorf("workspace holds %d contacts, want 1", n)
	}
}

// TestRecordBeingMadeKeepsItsEditTimes: the table edits the first name
// of a record the write-back made for a contact of the app, the app then
// edits the contact's first name, and the table the record's last name,
// all before the link is stored. The record's first name was read while
// it was the row's newest edit (by the observer of a polled table, or by
// a pass that left the record to the write-back): weighed at that time,
// not at the updated_at the last-name edit moved, the app's newer first
// name wins on both sides (issue 35: the 9 journaled losses of the
// hour-long poll soak).
func TestRecordBeingMadeKeepsItsEditTimes(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(e *env)
	}{
		{"the observer reads it", func(e *env) {
			if err := e.reconciler().NewObserver().Observe(t.Context()); err != nil {
				t.Fatal(err)
			}
		}},
		{"a pass reads it", func(e *env) {
			if sum := e.forward(); sum.Created != 0 {
				t.Fatalf("forward pass before the link: %v", sum)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := createEnv(t)
			c := e.madeInApp()
			first := e.tableEdit(map[string]any{"first_name": "Table"})
			tc.read(e)
			laterThan(first)
			app := e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.mem.put("r9", map[string]any{"last_name": "TableLast"})
			e.mem.setUpdatedAt("r9", app.UpdatedAt.Add(time.Millisecond))
			e.event("created", workspace.EventContactUpdated, c)
			e.event("app", workspace.EventContactUpdated, app)
			e.drain()
			e.forward()
			e.drain()
			e.forward()
			e.bothHold("r9", "App", "TableLast") // the app's newer first name, the table's last name
			cs, err := e.store.Conflicts.List("mem", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].Winner != "workspace" || cs[0].Workspace["firstName"] != "App" || cs[0].Source["firstName"] != "Table" {
				t.Errorf("conflict journal %+v, want one entry App/Table won by the workspace", cs)
			}
		})
	}
}

// TestRecordEditedBeforeItsLinkKeepsItsTime: the table edits the last
// name of a record the write-back made for a contact of the app while
// nothing reads the table (a restart between the create and its link),
// the link is then made, the app edits the last name and the table
// another column. The record as read when the link was made held the
// table's last name already: that read's time bounds the edit's, and the
// app's newer last name wins on both sides (issue 35: the hour-long poll
// soak, weighed at the later column's time).
func TestRecordEditedBeforeItsLinkKeepsItsTime(t *testing.T) {
	e := createEnv(t)
	c := e.madeInApp()
	tableAt := e.tableEdit(map[string]any{"last_name": "Table"})
	e.event("created", workspace.EventContactUpdated, c)
	e.drain()
	if l := e.link("r9"); !l.SourceUpdatedAt.Equal(tableAt) {
		t.Fatalf("link's version %v, want the record as edited (%v)", l.SourceUpdatedAt, tableAt)
	}
	laterThan(tableAt)
	app := e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("App")}})
	e.mem.put("r9", map[string]any{"first_name": "TableFirst"})
	e.mem.setUpdatedAt("r9", app.UpdatedAt.Add(time.Millisecond))
	e.event("app", workspace.EventContactUpdated, app)
	e.drain()
	e.forward()
	e.drain()
	e.forward()
	e.bothHold("r9", "TableFirst", "App") // the table's first name, the app's newer last name
}

// TestRecordDeletedBeforeItsLinkDeletesItsContact: the table deletes the
// record the write-back made for a contact of the app before the link is
// stored (the linking PATCH retried under faults, a restart). The pass
// that read the deletion found no link and let it go; the link is then
// stored for a deleted record, and nothing read the deletion again: the
// contact lived on alone (issue 35: CI's poll soak, a contact living 31 s
// after its row's delete). The link's commit asks the pass to read the
// record again, which carries the deletion by onSourceDelete.
func TestRecordDeletedBeforeItsLinkDeletesItsContact(t *testing.T) {
	e := createEnv(t)
	e.onSourceDelete = policy.DeleteRemove
	c := e.madeInApp()
	e.mem.remove("r9")
	if sum := e.forward(); sum.Deleted != 0 {
		t.Fatalf("forward pass before the link: %v, want nothing to delete yet", sum)
	}
	e.event("created", workspace.EventContactUpdated, c)
	e.drain()
	e.forward()
	if _, err := e.ws.GetContact(t.Context(), c.ID); !workspace.IsNotFound(err) {
		t.Errorf("contact after its record's deletion: err %v, want it deleted", err)
	}
	if l, ok, err := e.store.Links.Get("mem", "r9"); err != nil || ok {
		t.Errorf("link %+v (err %v), want none once the record's deletion is carried", l, err)
	}
}
