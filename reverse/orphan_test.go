package reverse

import (
	"testing"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
)

// TestContactDeletedBeforeItsRecordIsLinked: a contact made in the app
// and deleted before syncd linked the record it created for it (the
// linking PATCH answered 404, or the deletion met the pending create
// after a restart) leaves no record for the forward pass to make a
// contact of, and no pending marker: onWorkspaceDelete settles the
// record as it does a linked contact's. Before, the record stayed
// unlinked, the pending create was dropped at once, and after a SIGKILL
// the create's event made a second record (issue 35: the poll soak,
// seed 5, four people twice).
func TestContactDeletedBeforeItsRecordIsLinked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rule   policy.Delete
		how    string // "patch 404": deleted between the create and its link; "restart": a crash left the marker
		record bool   // the record is left (unlinked)
	}{
		{name: "delete, linking patch answered 404", rule: policy.DeleteRemove, how: "patch 404"},
		{name: "delete, restart with the create event", rule: policy.DeleteRemove, how: "restart"},
		{name: "delete, restart with the deletion event", rule: policy.DeleteRemove, how: "restart deleted"},
		{name: "unlink, linking patch answered 404", rule: policy.DeleteUnlink, how: "patch 404", record: true},
		{name: "ignore, restart with the deletion event", rule: policy.DeleteIgnore, how: "restart deleted", record: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.OnWorkspaceCreate, tg.OnWorkspaceDelete = "create", tc.rule })
			c := e.appCreate("Otto", "Orphan", "otto@example.com")
			app := emutest.NewApp(t, e.emu.URL)
			rec := "new1"
			switch tc.how {
			case "patch 404":
				e.mem.beforeWrite = func() { e.mem.beforeWrite = nil; app.Delete(c.ID) }
				e.event("created", workspace.EventContactUpdated, c)
			default:
				// A crash after the record was created and its id stored,
				// before the link: the create's event is still in the inbox.
				e.mem.put("r9", map[string]any{"id": "r9", "first_name": "Otto", "last_name": "Orphan", "email": "otto@example.com"})
				rec = "r9"
				if err := e.store.Reverse.PutPending(state.PendingCreate{Connector: "mem", ContactID: c.ID, RecordID: "r9",
					ContactUpdatedAt: c.UpdatedAt, Fields: map[string]string{"firstName": "Otto", "lastName": "Orphan", "emails.work": "otto@example.com"}}); err != nil {
					t.Fatal(err)
				}
				e.event("created", workspace.EventContactUpdated, c)
				app.Delete(c.ID)
				if tc.how == "restart deleted" {
					e.event("deleted", workspace.EventContactDeleted, c)
				}
			}
			e.drain()
			if n := e.creates(); n > 1 {
				t.Fatalf("%d records created, want at most one", n)
			}
			if _, pending, _ := e.store.Reverse.PendingOf("mem", c.ID); pending {
				t.Error("the pending create stayed")
			}
			if n, _ := e.store.Inbox.Count(); n != 0 {
				t.Errorf("%d events left in the inbox", n)
			}
			if dls, _ := e.store.DeadLetters.List("mem"); len(dls) != 0 {
				t.Errorf("dead letters %+v, want none: nothing waits for a person", dls)
			}
			got := e.mem.get(rec)
			if left := got.ID != "" && !got.Deleted; left != tc.record {
				t.Fatalf("record %s left: %v, want %v", rec, left, tc.record)
			}
			// The forward pass makes a contact of an unlinked record only
			// when the policy leaves the record.
			sum := e.forward()
			if want := map[bool]int{true: 1, false: 0}[tc.record]; sum.Created != want {
				t.Errorf("forward pass %v, want %d contacts made", sum, want)
			}
			// The deletion event coming late finds nothing left to do.
			e.event("deleted late", workspace.EventContactDeleted, c)
			e.drain()
			if n := e.creates(); n > 1 {
				t.Errorf("%d records created after the late deletion event", n)
			}
		})
	}
}
