package reverse

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// Issue 35: an app edit made after a table edit of the same field, whose
// forward patch is delayed (retries under faults, a batch, a restart),
// must not be overwritten by that patch unweighed. Before the fix the
// patch landed on the app's edit and the write-back then dropped the
// app's event as older than syncd's own write: both sides ended with the
// table's older value, with no conflict entry.

// settle delivers and applies every workspace event, then runs a last
// forward pass, which finds nothing to write.
func (e *env) settle() {
	e.t.Helper()
	e.waitDelivered()
	e.drain()
	if sum := e.forward(); sum.Updated != 0 || sum.Created != 0 {
		e.t.Fatalf("forward pass after the write-back wrote: %v", sum)
	}
	e.waitDelivered()
	e.drain()
}

// checkFirstName checks that both sides hold want, and the conflict
// journal one entry won by winner.
func (e *env) checkFirstName(want, winner string) {
	e.t.Helper()
	if got := *e.contact("1").DefaultFields.FirstName; got != want {
		e.t.Errorf("contact's firstName = %q, want %q", got, want)
	}
	if got := e.mem.get("1").Fields["first_name"]; got != want {
		e.t.Errorf("record's first_name = %v, want %q", got, want)
	}
	cs, err := e.store.Conflicts.List("mem", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Winner != winner || cs[0].Workspace["firstName"] != "App" || cs[0].Source["firstName"] != "Table" {
		e.t.Errorf("conflict journal %+v, want one entry App/Table won by %s", cs, winner)
	}
}

var appEditCases = []struct {
	name         string
	policy       policy.Conflict
	want, winner string
}{
	// The app's edit is the newer (the record's times are earlier).
	{name: "newest-wins", policy: policy.NewestWins, want: "App", winner: "workspace"},
	{name: "crm-wins", policy: policy.CRMWins, want: "Table", winner: "mem"},
}

// TestDelayedForwardPatchMeetsNewerAppEdit: the table's first name
// changes, then the app's, whose event waits in the inbox; the forward
// pass comes only then.
func TestDelayedForwardPatchMeetsNewerAppEdit(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.appPatch(e.link("1").ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.waitInbox(1)
			e.forward()
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// inFlight is the forward pass's workspace whose first contact patch is
// applied but answered as lost (a timeout), and during which a person
// edits the contact in the app, the edit's event reaching the inbox
// before the pass tries the patch again.
type inFlight struct {
	*workspace.Client
	during func()
	done   bool
}

func (w *inFlight) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	c, err := w.Client.UpdateContact(ctx, id, p)
	if w.done || err != nil {
		return c, err
	}
	w.done = true
	w.during()
	return workspace.Contact{}, fmt.Errorf("patch contact %s: %w", id, workspace.ErrOutcomeUnknown)
}

// TestAppEditDuringForwardPatch: the app edit lands while the contact's
// forward patch is in flight (after its first attempt, before the retry).
func TestAppEditDuringForwardPatch(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			id := e.link("1").ContactID
			e.fwd = &inFlight{Client: e.ws, during: func() {
				e.waitInbox(1) // the first attempt's echo
				e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
				e.waitInbox(2)
			}}
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.forward()
			e.fwd = nil
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestRestartBetweenAppEditAndForwardPatch: the app edit's event is in
// the inbox when syncd stops; after the restart the forward pass comes
// first.
func TestRestartBetweenAppEditAndForwardPatch(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy })
			e.seed(1)
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.appPatch(e.link("1").ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			if n, err := e.applier.CatchUp(context.Background(), "mem"); err != nil || n != 1 {
				t.Fatalf("catch-up queued %d, %v", n, err)
			}
			e.store.Close()
			e.open()
			e.newApplier()
			e.forward()
			if _, err := e.applier.CatchUp(context.Background(), "mem"); err != nil {
				t.Fatal(err)
			}
			e.drain()
			if sum := e.forward(); sum.Updated != 0 {
				t.Fatalf("forward pass after the write-back wrote: %v", sum)
			}
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestForwardPatchLeavesOutTheAppsWinningField: the table changes the
// first and last names, the app the first name (newer); the delayed
// forward patch sends the last name only, and the write-back brings the
// app's first name to the record from the patch's echo.
func TestForwardPatchLeavesOutTheAppsWinningField(t *testing.T) {
	e := newEnv(t, nil).listening()
	e.mem.put("1", map[string]any{"first_name": "Table", "last_name": "TableLast"})
	e.appPatch(e.link("1").ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.waitInbox(1)
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want the last name patched", sum)
	}
	e.settle()
	e.checkFirstName("App", "workspace")
	if got := *e.contact("1").DefaultFields.LastName; got != "TableLast" {
		t.Errorf("contact's lastName = %q, want TableLast", got)
	}
}

// TestAppEditWeighedAtItsOwnTime: the app edits the first name (t1), the
// table then the first name too (t3), the app then the last name (t2):
// the write-back receives both versions in one round and weighs the first
// name at t1, the time of the first version holding it, not at t2 (the
// newest version's, which may even be the echo of syncd's own write), so
// the table's newer first name stays.
func TestAppEditWeighedAtItsOwnTime(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	c := e.contact("1")
	v1 := c
	v1.DefaultFields.FirstName = ptr("App")
	v1.UpdatedAt = c.UpdatedAt.Add(time.Second)
	e.mem.put("1", map[string]any{"first_name": "Table"})
	e.mem.setUpdatedAt("1", v1.UpdatedAt.Add(time.Second))
	v2 := v1
	v2.DefaultFields.LastName = ptr("Later")
	v2.UpdatedAt = v1.UpdatedAt.Add(2 * time.Second)
	e.event("e1", workspace.EventContactUpdated, v1)
	e.event("e2", workspace.EventContactUpdated, v2)
	e.drain()
	rec := e.mem.get("1")
	if rec.Fields["first_name"] != "Table" || rec.Fields["last_name"] != "Later" {
		t.Errorf("record %v, want the table's first name and the app's last name", rec.Fields)
	}
	cs, err := e.store.Conflicts.List("mem", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Winner != "mem" || cs[0].Workspace["firstName"] != "App" || cs[0].Source["firstName"] != "Table" {
		t.Errorf("conflict journal %+v, want the first name won by mem", cs)
	}
}

// slowPatch is the forward pass's workspace whose first contact patch
// is slow to land (the client retrying it under faults): a person edits
// the contact in the app meanwhile, and the edit's event reaches the
// inbox, before the patch is applied and answered.
type slowPatch struct {
	*workspace.Client
	during func()
	done   bool
}

func (w *slowPatch) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	if !w.done {
		w.done = true
		w.during()
	}
	return w.Client.UpdateContact(ctx, id, p)
}

// TestAppEditDuringSlowForwardPatch: the app edit lands after the pass
// weighed the contact's pending edits and before its patch lands, which
// overwrites it; the pass weighs the events that came meanwhile and puts
// back an app edit that wins.
func TestAppEditDuringSlowForwardPatch(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			id := e.link("1").ContactID
			e.fwd = &slowPatch{Client: e.ws, during: func() {
				e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
				e.waitInbox(1)
			}}
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.forward()
			e.fwd = nil
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// lostAnswer is the forward pass's workspace whose first contact patch
// lands after a person's app edit (both events reaching the inbox) and
// whose answer is lost: the retry finds, among the contact's pending
// versions, the echo of its own first attempt as the newest.
type lostAnswer struct {
	*workspace.Client
	before, after func()
	done          bool
}

func (w *lostAnswer) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	if w.done {
		return w.Client.UpdateContact(ctx, id, p)
	}
	w.done = true
	w.before()
	if _, err := w.Client.UpdateContact(ctx, id, p); err != nil {
		return workspace.Contact{}, err
	}
	w.after()
	return workspace.Contact{}, fmt.Errorf("patch contact %s: %w", id, workspace.ErrOutcomeUnknown)
}

// TestAppEditOverwrittenByLostPatchAttempt: the app edit lands just
// before the first attempt of the forward patch, which overwrites it and
// whose answer is lost; the retry weighs the app's edit, not the echo of
// its own first attempt, and puts the app's value back when it wins.
func TestAppEditOverwrittenByLostPatchAttempt(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			id := e.link("1").ContactID
			e.fwd = &lostAnswer{Client: e.ws, before: func() {
				e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
				e.waitInbox(1)
			}, after: func() { e.waitInbox(2) }}
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.forward()
			e.fwd = nil
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestAppEditWhoseEventComesAfterForwardPatch: the app edit lands before
// the forward pass, but its event reaches syncd only after the pass
// patched the contact (a webhook delivery retried under faults, a
// backlog): nothing in the inbox tells the pass of it. The pass reads the
// contacts it is about to patch (one list call per 50), weighs the app's
// unseen edit by policy, and does not overwrite a winning one; the late
// event then finds the app's value where it was (issue 35: the CI soak's
// lost app edit, in poll mode).
func TestAppEditWhoseEventComesAfterForwardPatch(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy })
			e.seed(1)
			e.mem.put("1", map[string]any{"first_name": "Table"})
			app := e.appPatch(e.link("1").ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.forward()
			e.event("late", workspace.EventContactUpdated, app)
			e.drain()
			if sum := e.forward(); sum.Updated != 0 || sum.Created != 0 {
				t.Fatalf("forward pass after the write-back wrote: %v", sum)
			}
			e.drain()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestWriteBackVerdictStandsInTheForwardPass: the app edits the first
// name, the table then too (newer); the write-back weighs the app's
// event first and leaves the record's newer value for the forward pass,
// which must then patch it, not weigh the app's edit again as newer.
func TestWriteBackVerdictStandsInTheForwardPass(t *testing.T) {
	e := newEnv(t, nil).listening()
	e.appPatch(e.link("1").ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.mem.put("1", map[string]any{"first_name": "Table"})
	e.mem.setUpdatedAt("1", time.Now().Add(time.Second))
	e.waitInbox(1)
	e.drain()
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want the table's first name patched", sum)
	}
	e.settle()
	if got := *e.contact("1").DefaultFields.FirstName; got != "Table" {
		t.Errorf("contact's firstName = %q, want Table", got)
	}
	if got := e.mem.get("1").Fields["first_name"]; got != "Table" {
		t.Errorf("record's first_name = %v, want Table", got)
	}
}

// TestRestartAfterForwardPatchOverwroteAppEdit: the forward patch of the
// table's older first name lands on a newer app edit, and syncd is
// killed before it weighs the app's event or saves the link. After the
// restart the write-back meets both versions, the newest being syncd's
// own write of the record's value: the app's edit is weighed by policy,
// not taken as overwritten for good (issue 35: the logical soak, seed 2,
// an app edit 12 s after the table's, gone from both sides).
func TestRestartAfterForwardPatchOverwroteAppEdit(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			id := e.link("1").ContactID
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.waitInbox(1)
			// The forward pass's patch, its link never saved (SIGKILL).
			if _, err := e.ws.UpdateContact(context.Background(), id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("Table")}}); err != nil {
				t.Fatal(err)
			}
			e.waitInbox(2)
			e.newApplier() // syncd started again: the state as the kill left it
			e.drain()
			e.forward()
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestAppEditOnContactWhoseCreateLostItsLink: syncd made a record's
// contact and was killed before linking it; the table then edits the
// record, and the app (later) the contact. The pass after the restart
// finds the contact by its externalId: a value it holds that differs
// from the record's may be an app edit (the contact changed since it was
// made), weighed by policy rather than patched over (issue 35: the poll
// soak, an app edit 3.7 s after such a restart, overwritten).
func TestAppEditOnContactWhoseCreateLostItsLink(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy }).listening()
			e.mem.put("2", map[string]any{"id": "2", "first_name": "First2", "last_name": "Last2", "email": "p2@example.com", "company": "Acme"})
			// syncd's create, its link lost to a SIGKILL.
			c, err := e.ws.CreateContact(context.Background(), workspace.ContactCreate{Source: testSource, ExternalID: "2",
				DefaultFields: workspace.DefaultFieldsInput{FirstName: "First2", LastName: "Last2", Company: "Acme",
					Emails: []workspace.Item{{Name: "work", Value: "p2@example.com"}}}})
			if err != nil {
				t.Fatal(err)
			}
			e.waitDelivered()
			e.drain()
			e.mem.put("2", map[string]any{"first_name": "Table"})
			e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.waitDelivered()
			e.drain()
			e.forward()
			e.settle()
			got, err := e.ws.GetContact(context.Background(), c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if *got.DefaultFields.FirstName != tc.want {
				t.Errorf("contact's firstName = %q, want %q", *got.DefaultFields.FirstName, tc.want)
			}
			if v := e.mem.get("2").Fields["first_name"]; v != tc.want {
				t.Errorf("record's first_name = %v, want %q", v, tc.want)
			}
			cs, err := e.store.Conflicts.List("mem", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 1 || cs[0].Winner != tc.winner || cs[0].Workspace["firstName"] != "App" || cs[0].Source["firstName"] != "Table" {
				t.Errorf("conflict journal %+v, want one entry App/Table won by %s", cs, tc.winner)
			}
		})
	}
}

// TestLosingAppValueIsNotWeighedAgainLater: the app edits the first
// name, the table then too (newer), and the write-back lets the record
// win; the app then edits the last name. The first name the contact
// still holds is the app's losing value, not a new edit at the last
// name's time: the pass patches the table's, and both sides end with the
// table's first name and the app's last name (issue 35: the logical
// 60-minute soak left a true race with each side's value).
func TestLosingAppValueIsNotWeighedAgainLater(t *testing.T) {
	e := newEnv(t, nil).listening()
	id := e.link("1").ContactID
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.mem.put("1", map[string]any{"first_name": "Table"})
	recAt := app.UpdatedAt.Add(time.Millisecond)
	e.mem.setUpdatedAt("1", recAt)
	e.waitInbox(1)
	e.drain()
	for !time.Now().After(recAt.Add(time.Millisecond)) { // the last name's edit after the record's
		time.Sleep(time.Millisecond)
	}
	e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Later")}})
	e.waitInbox(1)
	e.forward()
	e.settle()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.FirstName != "Table" || rec.Fields["first_name"] != "Table" {
		t.Errorf("first name: contact %q, record %v; want the table's newer edit on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
	}
	if *c.DefaultFields.LastName != "Later" || rec.Fields["last_name"] != "Later" {
		t.Errorf("last name: contact %q, record %v; want the app's edit on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"])
	}
}

// TestRecordWinAfterThePassKeptTheAppValue: the pass meets a row edit
// before the app edit of the same field has reached the inbox, reads the
// contact, whose newest version (a later edit of another field) is newer
// than the row's, and leaves the app's value for the write-back; the
// write-back, with every version received, finds the app's edit older
// than the row's and lets the record win. The pass has read the row
// already and will not read it again: unless the record's value is
// brought to the contact, the sides keep each their own value (issue 35:
// the logical soak, seed 5, a first name left so).
func TestRecordWinAfterThePassKeptTheAppValue(t *testing.T) {
	var pokes atomic.Int32
	e := newEnv(t, func(tg *Target) { tg.Revisited = func() { pokes.Add(1) } })
	e.seed(1)
	id := e.link("1").ContactID
	v1 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.mem.put("1", map[string]any{"first_name": "Table"})
	recAt := v1.UpdatedAt.Add(time.Millisecond)
	e.mem.setUpdatedAt("1", recAt)
	for !time.Now().After(recAt.Add(time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	// A later app edit of a field that does not flow back.
	v2 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Company: workspace.Some("AppCo")}})
	if sum := e.forward(); sum.Updated != 0 {
		t.Fatalf("first pass %v: want the app's value left for the write-back", sum)
	}
	e.event("v1", workspace.EventContactUpdated, v1)
	e.event("v2", workspace.EventContactUpdated, v2)
	e.drain()
	if n := pokes.Load(); n != 1 {
		t.Errorf("the forward direction was poked %d times, want once for its revisit", n)
	}
	e.forward()
	e.drain()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.FirstName != "Table" || rec.Fields["first_name"] != "Table" {
		t.Errorf("first name: contact %q, record %v; want the table's newer edit on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
	}
}

// TestRowTimeMovedByAnotherColumn: a row's first name is edited, then the
// app's first name, then the row's company: the row's updated_at is now
// later than the app's edit, but its first name is older, as the change
// stream's versions tell (connector.Record.FieldsAt). Both directions
// weigh the first names at their own times: the app's newer edit wins on
// both sides (issue 35: the logical soak, seed 2, the row's older first
// name winning by the company's later edit, journaled).
func TestRowTimeMovedByAnotherColumn(t *testing.T) {
	e := newEnv(t, nil).listening()
	e.rowTimeMovedByAnotherColumn()
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want the company patched", sum)
	}
	e.settle()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.FirstName != "App" || rec.Fields["first_name"] != "App" {
		t.Errorf("first name: contact %q, record %v; want the app's newer edit on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
	}
	if *c.DefaultFields.Company != "TableCo" {
		t.Errorf("company: contact %q, want the row's", *c.DefaultFields.Company)
	}
}

// TestRowReadBeforeAnotherColumnMovedIt: polling reads rows whole, so the
// row's updated_at is all it tells of a field's time. But the write-back
// read the row, for an app edit of another field, while it held its new
// first name at its own time: that time is kept (state.RecordEdit), and
// when a later edit of the row's company moves its updated_at past the
// app's first-name edit, both directions weigh the first names at their
// own times (issue 35: the poll soak's journaled losses, the row's older
// first name winning by a later edit of another column).
func TestRowReadBeforeAnotherColumnMovedIt(t *testing.T) {
	e := newEnv(t, nil).listening()
	id := e.link("1").ContactID
	firstAt := time.Now().Add(-100 * time.Millisecond)
	e.mem.put("1", map[string]any{"first_name": "Table"})
	e.mem.setUpdatedAt("1", firstAt)
	e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("AppLast")}})
	e.waitInbox(1)
	e.drain() // the write-back reads the row and writes the last name
	if got := e.mem.get("1").Fields["last_name"]; got != "AppLast" {
		t.Fatalf("record's last_name = %v, want the app's", got)
	}
	e.mem.setUpdatedAt("1", firstAt.Add(time.Millisecond))
	e.waitDelivered()
	e.drain()
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.mem.put("1", map[string]any{"company": "TableCo"})
	e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Millisecond))
	e.waitInbox(1)
	e.forward()
	e.settle()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.FirstName != "App" || rec.Fields["first_name"] != "App" {
		t.Errorf("first name: contact %q, record %v; want the app's newer edit on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
	}
	if *c.DefaultFields.LastName != "AppLast" || *c.DefaultFields.Company != "TableCo" {
		t.Errorf("contact last name %q, company %q; want the app's and the row's", *c.DefaultFields.LastName, *c.DefaultFields.Company)
	}
}

// beforePatch runs before once, just before the first forward patch.
type beforePatch struct {
	*workspace.Client
	before func()
}

func (w *beforePatch) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	if w.before != nil {
		w.before()
		w.before = nil
	}
	return w.Client.UpdateContact(ctx, id, p)
}

// TestAppEditMadeStaleBySyncdsPatchOfAnotherField: the app edits the last
// name, the row its first name, then its last name just before syncd's
// patch of the first name lands. The patch makes the app's version stale
// (older than the link's contact version), dropped in one round; its
// echo, in the next, is the first version holding the app's last name
// that the write-back sees, and weighed at the echo's time the app's
// older edit beat the row's newer one. The stale version's time is kept
// (noteStale): the row's newer last name wins on both sides.
func TestAppEditMadeStaleBySyncdsPatchOfAnotherField(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	id := e.link("1").ContactID
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("AppLast")}})
	e.event("app", workspace.EventContactUpdated, app)
	e.mem.put("1", map[string]any{"first_name": "Table"})
	e.mem.setUpdatedAt("1", app.UpdatedAt.Add(-time.Millisecond))
	var echo workspace.Contact
	e.fwd = &beforePatch{Client: e.ws, before: func() {
		for !time.Now().After(app.UpdatedAt.Add(2 * time.Millisecond)) {
			time.Sleep(time.Millisecond)
		}
		e.mem.put("1", map[string]any{"last_name": "TableLast"})
		u := time.Now()
		e.mem.setUpdatedAt("1", u)
		for !time.Now().After(u.Add(2 * time.Millisecond)) { // the patch's answer later than the row's edit
			time.Sleep(time.Millisecond)
		}
	}}
	e.forward()
	e.fwd = nil
	e.drain() // the app's version, stale now
	echo, err := e.ws.GetContact(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	e.event("echo", workspace.EventContactUpdated, echo)
	e.drain()
	e.forward()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.LastName != "TableLast" || rec.Fields["last_name"] != "TableLast" {
		t.Errorf("last name: contact %q, record %v; want the row's newer edit on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"])
	}
}

// TestWriteBackLostItsCommitThenANewerAppEdit: the write-back writes the
// app's last name into the row and syncd is killed before the round's
// commit: the link and the inbox are as before, the row holds the app's
// value at the time of syncd's write. The app edits the last name again
// meanwhile. The pass meets the row's value, older than the app's newer
// edit though the row's updated_at is later: weighed at the time the app
// made it (stored before the write), the newer edit wins on both sides.
func TestWriteBackLostItsCommitThenANewerAppEdit(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	id := e.link("1").ContactID
	saved := e.link("1")
	v1 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("A1")}})
	e.event("v1", workspace.EventContactUpdated, v1)
	e.drain()
	if got := e.mem.get("1").Fields["last_name"]; got != "A1" {
		t.Fatalf("record's last_name = %v, want the app's", got)
	}
	// The SIGKILL before the commit: the link as it was, the event again.
	if err := e.store.Links.Put(saved); err != nil {
		t.Fatal(err)
	}
	e.event("v1 again", workspace.EventContactUpdated, v1)
	for !time.Now().After(v1.UpdatedAt.Add(2 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	v2 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("A2")}})
	e.event("v2", workspace.EventContactUpdated, v2)
	e.mem.setUpdatedAt("1", v2.UpdatedAt.Add(time.Millisecond)) // syncd's write, later than the app's newer edit
	e.forward()
	e.drain()
	e.forward()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.LastName != "A2" || rec.Fields["last_name"] != "A2" {
		t.Errorf("last name: contact %q, record %v; want the app's newer edit on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"])
	}
}

// TestWriteBackLeavesARowTimeConflictToTheStream: the same edits as
// TestRowTimeMovedByAnotherColumn, but the write-back meets the app's
// edit before the pass has read the row's versions: it has only the row's
// updated_at, later than the app's edit. On a connector that streams it
// leaves the conflict to the pass, which weighs the first names at their
// own times; the app's newer edit wins on both sides.
func TestWriteBackLeavesARowTimeConflictToTheStream(t *testing.T) {
	for _, streams := range []bool{true, false} {
		t.Run(fmt.Sprintf("streams %v", streams), func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Streams = func() bool { return streams } }).listening()
			e.rowTimeMovedByAnotherColumn()
			for range 2 { // the write-back first, for more than one round
				e.drain()
				if n, _ := e.store.Inbox.Count(); streams && n != 1 {
					t.Fatalf("%d events in the inbox, want the app's edit left for after the pass", n)
				}
			}
			e.forward()
			e.waitDelivered()
			e.drain()
			e.forward()
			e.waitDelivered()
			e.drain()
			c := e.contact("1")
			rec := e.mem.get("1")
			want := "App"
			if !streams {
				want = "Table" // the row's time is all there is
			}
			if *c.DefaultFields.FirstName != want || rec.Fields["first_name"] != want {
				t.Errorf("first name: contact %q, record %v; want %s on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"], want)
			}
		})
	}
}

// aroundPatch runs before and after around the first forward patch.
type aroundPatch struct {
	*workspace.Client
	before, after func()
}

func (w *aroundPatch) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	before, after := w.before, w.after
	w.before, w.after = nil, nil
	if before != nil {
		before()
	}
	c, err := w.Client.UpdateContact(ctx, id, p)
	if after != nil {
		after()
	}
	return c, err
}

// TestPutBackNeverOverwritesANewerAppEdit: the forward patch of the row's
// last name lands on an app edit made while it was in flight, which wins
// and is put back; but the app edited the last name again after the
// patch: the put-back leaves that newer edit alone, and it wins on both
// sides (issue 35: the logical soak, a put-back of the app's company 0.1 s
// after the app's newer edit of it).
func TestPutBackNeverOverwritesANewerAppEdit(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	id := e.link("1").ContactID
	e.mem.put("1", map[string]any{"last_name": "Table"})
	e.mem.setUpdatedAt("1", time.Now().Add(-time.Second))
	e.fwd = &aroundPatch{Client: e.ws,
		before: func() {
			a1 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("A1")}})
			e.event("a1", workspace.EventContactUpdated, a1)
		},
		after: func() {
			time.Sleep(2 * time.Millisecond)
			a2 := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("A2")}})
			e.event("a2", workspace.EventContactUpdated, a2)
		}}
	e.forward()
	e.fwd = nil
	if got := *e.contact("1").DefaultFields.LastName; got != "A2" {
		t.Fatalf("contact's last name after the pass = %q, want the app's newest edit left alone", got)
	}
	e.drain()
	e.forward()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.LastName != "A2" || rec.Fields["last_name"] != "A2" {
		t.Errorf("last name: contact %q, record %v; want the app's newest edit on both sides", *c.DefaultFields.LastName, rec.Fields["last_name"])
	}
}

// failedPatch answers every forward patch with a broken connection.
type failedPatch struct{ *workspace.Client }

func (w *failedPatch) UpdateContact(context.Context, string, workspace.ContactPatch) (workspace.Contact, error) {
	return workspace.Contact{}, errors.New("connection reset by peer")
}

// TestReadBeforeAnotherColumnMovedIt: the row's new first name is read,
// but no patch carries it (the pass's patch fails under faults, or the
// pass is busy with others); the app then edits the first name, and the
// row its company, which moves the row's updated_at past the app's edit.
// Weighed at that updated_at, the row's older first name beat the app's
// newer one on both sides (issue 35: the poll soak, seed 3, an app edit 7
// s after the table's lost to it). The read keeps the first name's time:
// a pass's before its patches (Reconciler.observe), the observer's between
// passes (Observer).
func TestReadBeforeAnotherColumnMovedIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(e *env)
	}{
		{name: "by a pass whose patch failed", read: func(e *env) {
			e.fwd = &failedPatch{Client: e.ws}
			_, _ = e.forwardRun() // its patch fails
			e.fwd = nil
		}},
		{name: "by the observer between passes", read: func(e *env) {
			if err := e.reconciler().NewObserver().Observe(e.t.Context()); err != nil {
				e.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.seed(1)
			id := e.link("1").ContactID
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.mem.setUpdatedAt("1", time.Now().Add(-time.Second))
			tc.read(e)
			app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			e.event("app", workspace.EventContactUpdated, app)
			e.mem.put("1", map[string]any{"company": "TableCo"})
			e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Millisecond))
			e.drain()
			// The write-back's UPDATE moves the row's updated_at to now, as
			// a table's trigger does (the test source's clock lags).
			e.mem.setUpdatedAt("1", time.Now())
			e.forward()
			e.settle()
			e.checkFirstName("App", "workspace")
			if got := *e.contact("1").DefaultFields.Company; got != "TableCo" {
				t.Errorf("contact's company %q, want the row's", got)
			}
		})
	}
}

// TestAppEditInFlightWhoseEventComesLate: the app edits the first name
// while the forward patch of the table's older first name is in flight
// (applied before the patch), and its event reaches the inbox only after
// the pass's last look, beside the patch's echo. Older than the patch's
// answer, it read as stale and was dropped: the app's newer edit gone
// from both sides, with no journal entry (issue 35: the poll soak, seed
// 3, an app edit 1 ms before syncd's delayed patch landed). The patch's
// flight (state.Flight) tells it was not weighed: it is, by policy.
func TestAppEditInFlightWhoseEventComesLate(t *testing.T) {
	for _, tc := range appEditCases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = tc.policy })
			e.seed(1)
			id := e.link("1").ContactID
			e.mem.put("1", map[string]any{"first_name": "Table"})
			e.mem.setUpdatedAt("1", time.Now().Add(-time.Second))
			var app workspace.Contact
			e.fwd = e.inFlightClient(http.MethodPatch, func() {
				app = e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
			})
			e.forward()
			e.fwd = nil
			echo, err := e.ws.GetContact(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if *echo.DefaultFields.FirstName != "Table" {
				t.Fatalf("contact's first name after the patch = %q, want the patch's", *echo.DefaultFields.FirstName)
			}
			e.event("app", workspace.EventContactUpdated, app)
			e.event("echo", workspace.EventContactUpdated, echo)
			e.drain()
			e.mem.setUpdatedAt("1", time.Now()) // the write-back's UPDATE, as a trigger does
			e.forward()
			e.settle()
			e.checkFirstName(tc.want, tc.winner)
		})
	}
}

// TestWriteBackKeepsLeavingARowTimeConflictToTheStream: as
// TestWriteBackLeavesARowTimeConflictToTheStream, but the row's company is
// edited again between two rounds of the write-back. The first round kept
// the row's updated_at as the time the row held its first name (a read of
// the row: a bound, not the field's own time); the second took that for
// the first name's own time, older than the row's new updated_at, and let
// the row's older first name win on both sides (issue 35: the logical
// soak, seed 6, an app edit 14.7 s after the table's, journaled as lost).
func TestWriteBackKeepsLeavingARowTimeConflictToTheStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		lag  time.Duration // how far the write-back's clock is past the row's edits
	}{
		{name: "a pass close behind"},
		// The logical hour-long soak at 12 edits/s: the pass up to a
		// minute behind the stream, past the 30 s the write-back waited
		// (47 app edits journaled as lost).
		{name: "a pass a minute behind", lag: time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) { keepLeavingToTheStream(t, tc.lag) })
	}
}

func keepLeavingToTheStream(t *testing.T, lag time.Duration) {
	e := newEnv(t, func(tg *Target) { tg.Streams = func() bool { return true } }).listening()
	e.applier.opts.Now = func() time.Time { return time.Now().Add(lag) }
	app := e.rowTimeMovedByAnotherColumn()
	for round := range 2 {
		e.drain()
		if n, _ := e.store.Inbox.Count(); n != 1 {
			t.Fatalf("round %d: %d events in the inbox, want the app's edit left for after the pass", round+1, n)
		}
		e.mem.put("1", map[string]any{"company": fmt.Sprintf("TableCo %d", round+2)})
		e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Duration(round+2)*time.Millisecond))
	}
	e.forward()
	e.waitDelivered()
	e.drain()
	e.forward()
	e.waitDelivered()
	e.drain()
	c := e.contact("1")
	rec := e.mem.get("1")
	if *c.DefaultFields.FirstName != "App" || rec.Fields["first_name"] != "App" {
		t.Errorf("first name: contact %q, record %v; want the app's newer edit on both sides", *c.DefaultFields.FirstName, rec.Fields["first_name"])
	}
}

// rowTimeMovedByAnotherColumn makes row 1's first name "Table" 50 ms
// ago (the stream's FieldsAt tells), then the app's "App", then the
// row's company, which moves the row's updated_at past the app's edit;
// it returns the app's version, once its event is in the inbox.
func (e *env) rowTimeMovedByAnotherColumn() workspace.Contact {
	e.t.Helper()
	id := e.link("1").ContactID
	firstAt := time.Now().Add(-50 * time.Millisecond)
	e.mem.put("1", map[string]any{"first_name": "Table"})
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.mem.put("1", map[string]any{"company": "TableCo"})
	e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Millisecond))
	e.mem.fieldsAt = map[string]map[string]time.Time{"1": {"first_name": firstAt}}
	e.waitInbox(1)
	return app
}

// TestPutOffWriteBackKeepsTheRecordsEditTime: the table edits the first
// name (the observer reads it at its time), the app then edits it, and
// the table edits the last name while the write-back of the app's first
// name is on its way: the write is put off (the record changed since it
// was read). The record's first name keeps its time: the next round, and
// the observer, weigh it at that time, not at the updated_at the
// last-name edit moved, and the app's newer first name wins on both
// sides (issue 35: the hour-long poll soak, an app edit 8.7 s newer
// than the row's lost to it).
func TestPutOffWriteBackKeepsTheRecordsEditTime(t *testing.T) {
	e := newEnv(t, nil).listening()
	id := e.link("1").ContactID
	observe := func() {
		if err := e.reconciler().NewObserver().Observe(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	e.mem.put("1", map[string]any{"first_name": "Table"})
	tableAt := time.Now()
	e.mem.setUpdatedAt("1", tableAt)
	observe()
	laterThan(tableAt)
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.waitInbox(1)
	e.mem.beforeWrite = func() {
		e.mem.beforeWrite = nil
		e.mem.put("1", map[string]any{"last_name": "TableLast"})
		e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Millisecond))
	}
	e.drain()
	if n, _ := e.store.Inbox.Count(); n != 1 {
		t.Fatalf("%d events in the inbox, want the app's edit put off", n)
	}
	observe()
	e.drain()
	e.forward()
	e.settle()
	e.bothHold("1", "App", "TableLast") // the app's newer first name, the table's last name
}
