package reverse

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
)

// Issue 35: an edit made on one side well after a delete on the other
// vanished with no dead letter and no conflict entry. editAfterDelete
// settles it, in both directions, and the conflict journal records it.

// setClock moves the record system's clock (the times of the records'
// changes) to at.
func (m *memConn) setClock(at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock = at
}

// remove deletes a record as a person using the system would (a soft
// delete the forward pass reads as a deletion).
func (m *memConn) remove(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[id].Deleted = true
	m.recs[id].UpdatedAt = m.tick()
}

// checkAfterDelete checks the journal's one entry for record 1.
func (e *env) checkAfterDelete(winner string) {
	e.t.Helper()
	cs, err := e.store.Conflicts.List("mem", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Kind != state.KindEditAfterDelete || cs[0].Winner != winner || cs[0].ExternalID != "1" {
		e.t.Fatalf("conflict journal %+v, want one edit-after-delete entry of record 1 won by %s", cs, winner)
	}
}

// contactOf returns the contact carrying externalId ext, if any.
func (e *env) contactOf(ext string) (workspace.Contact, bool) {
	e.t.Helper()
	cs, err := e.ws.ContactsByExternalIDs(context.Background(), testSource, []string{ext})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(cs) == 0 {
		return workspace.Contact{}, false
	}
	return cs[0], true
}

var recordEditCases = []struct {
	name   string
	rule   policy.EditAfterDelete
	after  time.Duration // the record edit's time after the contact's deletion
	stays  bool
	winner string
}{
	{name: "edit-wins", rule: policy.EditWins, after: 10 * time.Second, stays: true, winner: "mem"},
	{name: "edit-wins, within the race window", rule: policy.EditWins, after: time.Second, winner: "workspace"},
	{name: "delete-wins", rule: policy.DeleteWins, after: 10 * time.Second, winner: "workspace"},
}

// recordEditAfterDelete deletes record 1's contact in the app, then
// edits the record after.
func recordEditAfterDelete(t *testing.T, rule policy.EditAfterDelete, after time.Duration) *env {
	e := newEnv(t, func(tg *Target) {
		tg.OnWorkspaceDelete, tg.EditAfterDelete = policy.DeleteRemove, rule
		tg.MassDeleteThreshold = 1 // one contact of one: not a mass delete here
	})
	e.listen()
	e.seed(1)
	e.waitDelivered()
	e.drain()
	emutest.NewApp(t, e.emu.URL).Delete(e.link("1").ContactID)
	e.waitInbox(1)
	e.mem.setClock(time.Now().Add(after))
	e.mem.put("1", map[string]any{"last_name": "Edited"})
	return e
}

// checkRecordEdit checks the outcome of recordEditAfterDelete.
func (e *env) checkRecordEdit(stays bool, winner string) {
	e.t.Helper()
	e.waitDelivered()
	e.drain()
	rec := e.mem.get("1")
	c, linked := e.contactOf("1")
	if stays {
		if rec.ID == "" || rec.Fields["last_name"] != "Edited" {
			e.t.Errorf("record 1 %+v, want it kept with its edit", rec)
		}
		if !linked || *c.DefaultFields.LastName != "Edited" {
			e.t.Errorf("contact of record 1 %+v (found %v), want it made again with the edit", c, linked)
		}
	} else if rec.ID != "" || linked {
		e.t.Errorf("record 1 %+v, contact found %v: want both deleted", rec, linked)
	}
	e.checkAfterDelete(winner)
}

// TestRecordEditAfterContactDeleteWriteBackFirst: the write-back applies
// the deletion before the forward pass sees the edit.
func TestRecordEditAfterContactDeleteWriteBackFirst(t *testing.T) {
	for _, tc := range recordEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := recordEditAfterDelete(t, tc.rule, tc.after)
			e.drain()
			e.forward()
			e.checkRecordEdit(tc.stays, tc.winner)
		})
	}
}

// TestRecordEditAfterContactDeleteForwardFirst: the forward pass meets
// the deleted contact (a patch answered 404) while the deletion's event
// waits in the inbox.
func TestRecordEditAfterContactDeleteForwardFirst(t *testing.T) {
	for _, tc := range recordEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := recordEditAfterDelete(t, tc.rule, tc.after)
			e.forward()
			e.checkRecordEdit(tc.stays, tc.winner)
		})
	}
}

// TestAppEditAfterRecordDelete: the record is deleted (onSourceDelete:
// delete), then its contact edited in the app before the forward pass
// carries the deletion over. With edit-wins the contact stays and the
// write-back makes its record again.
func TestAppEditAfterRecordDelete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   policy.EditAfterDelete
		before time.Duration // the record's deletion before the app edit
		stays  bool
		winner string
	}{
		{name: "edit-wins", rule: policy.EditWins, before: 10 * time.Second, stays: true, winner: "workspace"},
		{name: "edit-wins, within the race window", rule: policy.EditWins, before: time.Second, winner: "mem"},
		{name: "delete-wins", rule: policy.DeleteWins, before: 10 * time.Second, winner: "mem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.EditAfterDelete = tc.rule })
			e.onSourceDelete = policy.DeleteRemove
			e.seed(1)
			id := e.link("1").ContactID
			e.mem.setClock(time.Now().Add(-tc.before))
			e.mem.remove("1")
			e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.forward()
			e.drain()
			c, err := e.ws.GetContact(context.Background(), id)
			switch {
			case tc.stays && (err != nil || *c.DefaultFields.FirstName != "App"):
				t.Errorf("contact %+v, %v: want it kept with the app's edit", c, err)
			case !tc.stays && !workspace.IsNotFound(err):
				t.Errorf("contact %+v, %v: want it deleted", c, err)
			}
			if tc.stays {
				// The record is made again from the contact, and linked.
				l, ok, err := e.store.Links.ByContact("mem", id)
				if err != nil || !ok {
					t.Fatalf("contact %s has no link (%v): its record was not made again", id, err)
				}
				if rec := e.mem.get(l.RecordID); rec.Deleted || rec.Fields["first_name"] != "App" || c.ExternalID == nil || *c.ExternalID != l.ExternalID {
					t.Errorf("record %+v, contact's externalId %v, link %+v: want a new record with the app's edit, linked", rec, c.ExternalID, l)
				}
			}
			e.checkAfterDelete(tc.winner)
		})
	}
}

// TestWriteBackDeadLetterSettledByTheDeletion: the app's edit of a
// contact whose record was deleted reaches the write-back before the
// pass carries the deletion: the record is not found, and the edit is
// set aside. The pass then settles it by editAfterDelete and journals
// it: the dead letter, which asked an operator to look, is cleared
// (issue 35's soak: hundreds left after an hour, each settled long
// before).
func TestWriteBackDeadLetterSettledByTheDeletion(t *testing.T) {
	for _, tc := range appEditAfterDeleteCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.EditAfterDelete = tc.rule })
			e.onSourceDelete = policy.DeleteRemove
			e.seed(1)
			id := e.link("1").ContactID
			e.mem.setClock(time.Now().Add(-10 * time.Second))
			e.mem.remove("1")
			app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.event("app", workspace.EventContactUpdated, app)
			e.drain()
			dls, err := e.store.DeadLetters.List("mem")
			if err != nil {
				t.Fatal(err)
			}
			if len(dls) != 1 || dls[0].Operation != state.OpWriteBack || dls[0].Key != id {
				t.Fatalf("dead letters after the write-back %+v, want the edit set aside (record not found)", dls)
			}
			e.forward()
			e.drain()
			e.checkAfterDelete(tc.winner)
			if dls, _ := e.store.DeadLetters.List("mem"); len(dls) != 0 {
				t.Errorf("dead letters %+v after the deletion was settled, want none", dls)
			}
		})
	}
}

// appEditAfterDeleteCases are an app edit 10 s after its record's
// deletion, under each editAfterDelete rule.
var appEditAfterDeleteCases = []struct {
	name   string
	rule   policy.EditAfterDelete
	stays  bool
	winner string
}{
	{name: "edit-wins", rule: policy.EditWins, stays: true, winner: "workspace"},
	{name: "delete-wins", rule: policy.DeleteWins, winner: "mem"},
}

// newRecordDeletedEnv is a listening env with onSourceDelete: delete and
// the rule, whose one record, linked to contact id, was deleted 10 s ago.
func newRecordDeletedEnv(t *testing.T, rule policy.EditAfterDelete) (e *env, id string) {
	t.Helper()
	e = newEnv(t, func(tg *Target) { tg.EditAfterDelete = rule })
	e.onSourceDelete = policy.DeleteRemove
	e.listen()
	e.seed(1)
	e.waitDelivered()
	e.drain()
	id = e.link("1").ContactID
	e.mem.setClock(time.Now().Add(-10 * time.Second))
	e.mem.remove("1")
	return e, id
}

// deleteWaits is the forward pass's workspace whose contact deletes wait
// for their turn (the rate limiter, seconds at times): during the first
// wait, a person edits the contact in the app and the event reaches the
// inbox.
type deleteWaits struct {
	*workspace.Client
	during func()
	done   bool
}

func (w *deleteWaits) DeleteContact(ctx context.Context, id string) error {
	if !w.done {
		w.done = true
		w.during()
	}
	return w.Client.DeleteContact(ctx, id)
}

// TestAppEditWhileRecordDeleteWaits: the pass reads the contact of a
// deleted record (no edit yet) and decides to delete it; the app edits
// it while the delete waits for its turn. The edit, well after the
// record's deletion, is weighed before the delete is sent: with
// edit-wins the contact stays and its record is made again; otherwise
// the delete goes on, journaled (issue 35: an app edit 7.7 s after the
// table's delete, deleted with no journal entry).
func TestAppEditWhileRecordDeleteWaits(t *testing.T) {
	for _, tc := range appEditAfterDeleteCases {
		t.Run(tc.name, func(t *testing.T) {
			e, id := newRecordDeletedEnv(t, tc.rule)
			e.fwd = &deleteWaits{Client: e.ws, during: func() {
				e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
				e.waitInbox(1)
			}}
			e.forward()
			e.fwd = nil
			e.waitDelivered()
			e.drain()
			c, err := e.ws.GetContact(context.Background(), id)
			switch {
			case tc.stays && (err != nil || *c.DefaultFields.FirstName != "App"):
				t.Fatalf("contact %+v, %v: want it kept with the app's edit", c, err)
			case !tc.stays && !workspace.IsNotFound(err):
				t.Fatalf("contact %+v, %v: want it deleted", c, err)
			}
			if tc.stays {
				l, ok, err := e.store.Links.ByContact("mem", id)
				if err != nil || !ok {
					t.Fatalf("contact %s has no link (%v): its record was not made again", id, err)
				}
				if rec := e.mem.get(l.RecordID); rec.Deleted || rec.Fields["first_name"] != "App" {
					t.Errorf("record %+v: want a new record with the app's edit", rec)
				}
			}
			e.checkAfterDelete(tc.winner)
		})
	}
}

// TestRecordEditBetweenTheReadAndTheDelete: the write-back reads the
// record of a contact deleted in the app (nothing edited since), and the
// row is edited, well after the deletion, before the delete reaches the
// table. The delete is conditioned on the record as read: refused
// (ErrChanged), it is weighed again in the next round, and the edit,
// more than the race window after the deletion, keeps the record with
// editAfterDelete: edit-wins, journaled (issue 35: the logical soak in
// CI, a row edit 5.3 s after the app's delete soft-deleted 24 ms later).
func TestRecordEditBetweenTheReadAndTheDelete(t *testing.T) {
	e := newEnv(t, func(tg *Target) {
		tg.OnWorkspaceDelete, tg.EditAfterDelete = policy.DeleteRemove, policy.EditWins
		tg.MassDeleteThreshold = 1
		tg.Getter = nil // set below: the memConn reads its records
	})
	e.target.Getter = e.mem
	e.newApplier()
	e.listen()
	e.seed(1)
	e.waitDelivered()
	e.drain()
	emutest.NewApp(t, e.emu.URL).Delete(e.link("1").ContactID)
	e.waitInbox(1)
	e.mem.beforeWrite = func() {
		e.mem.beforeWrite = nil
		e.mem.setClock(time.Now().Add(10 * time.Second))
		e.mem.put("1", map[string]any{"last_name": "Edited"})
	}
	e.drain()
	e.forward() // the record kept: its contact made again
	e.checkRecordEdit(true, "mem")
}
