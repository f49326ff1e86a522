package reverse

import (
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// TestAppEditKnownOnlyFromACatchUpListing: the app edits the last name
// while syncd is down (its delivery fails), the table then edits the
// row's last name, and the app the first name. After the restart a
// catch-up listing gives the contact's newest version only: its
// updatedAt is the first name's edit, later than the row's, but the
// app's last name may be older. The write-back leaves the conflict
// until the service delivers the missed version again, which tells the
// last name's own time: the row's newer edit wins (issue 35: the binlog
// soak, seed 9). A delivery that never comes leaves the listing's time to
// decide once deliveryWait has passed.
func TestAppEditKnownOnlyFromACatchUpListing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		redeliver bool
		lag       time.Duration // how far the write-back's clock is past the edits
		want      string
	}{
		{name: "the missed version delivered again", redeliver: true, want: "Table"},
		{name: "no delivery within the wait", lag: deliveryWait + time.Minute, want: "AppLast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.seed(1)
			e.applier.opts.Now = func() time.Time { return time.Now().Add(tc.lag) }
			id := e.link("1").ContactID
			missed := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("AppLast")}})
			for !time.Now().After(missed.UpdatedAt.Add(2 * time.Millisecond)) {
				time.Sleep(time.Millisecond)
			}
			e.mem.put("1", map[string]any{"last_name": "Table"})
			rowAt := time.Now()
			e.mem.setUpdatedAt("1", rowAt)
			for !time.Now().After(rowAt.Add(2 * time.Millisecond)) {
				time.Sleep(time.Millisecond)
			}
			e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("AppFirst")}})
			if n, err := e.applier.CatchUp(t.Context(), "mem"); err != nil || n != 1 {
				t.Fatalf("catch-up enqueued %d versions, %v; want the newest", n, err)
			}
			e.drain()
			if tc.redeliver {
				if n, _ := e.store.Inbox.Count(); n != 1 {
					t.Fatalf("%d events in the inbox after the first round, want the listed version left", n)
				}
				e.event("missed", workspace.EventContactUpdated, missed)
				e.drain()
			}
			e.forward()
			e.drain()
			c := e.contact("1")
			rec := e.mem.get("1")
			if *c.DefaultFields.LastName != tc.want || rec.Fields["last_name"] != tc.want {
				t.Errorf("last name: contact %q, record %v; want %q on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"], tc.want)
			}
			if *c.DefaultFields.FirstName != "AppFirst" || rec.Fields["first_name"] != "AppFirst" {
				t.Errorf("first name: contact %q, record %v; want the app's on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
			}
			if n, _ := e.store.Inbox.Count(); n != 0 {
				t.Errorf("%d events left in the inbox", n)
			}
		})
	}
}
