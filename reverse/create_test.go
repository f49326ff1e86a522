package reverse

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
)

func createEnv(t *testing.T) *env {
	return newEnv(t, func(tg *Target) { tg.OnWorkspaceCreate = "create" })
}

// appCreate makes a contact in the app: no source, no externalId.
func (e *env) appCreate(first, last, email string) workspace.Contact {
	e.t.Helper()
	return emutest.NewApp(e.t, e.emu.URL).Create(workspace.ContactCreate{
		DefaultFields: workspace.DefaultFieldsInput{FirstName: first, LastName: last, Emails: []workspace.Item{{Name: "work", Value: email}}}})
}

func (e *env) creates() int {
	_, changes := e.mem.writes()
	n := 0
	for _, ch := range changes {
		if ch.Op == connector.OpCreate {
			n++
		}
	}
	return n
}

func TestContactMadeInAppIsCreatedOnce(t *testing.T) {
	e := createEnv(t)
	e.seed(1)
	e.listen()
	c := e.appCreate("Nora", "New", "Nora@Example.com")
	e.waitInbox(1)
	e.drain()
	if n := e.creates(); n != 1 {
		t.Fatalf("%d creates, want 1", n)
	}
	rec := e.mem.get("new1")
	if rec.Fields["first_name"] != "Nora" || rec.Fields["last_name"] != "New" || rec.Fields["email"] != "nora@example.com" {
		t.Fatalf("created record %+v", rec)
	}
	got, err := e.ws.GetContact(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExternalID == nil || *got.ExternalID != "new1" || got.Source == nil || *got.Source != testSource {
		t.Fatalf("contact after the create: externalId %v source %v", got.ExternalID, got.Source)
	}
	l := e.link("new1")
	if l.ContactID != c.ID || l.RecordID != "new1" || l.Fields["lastName"] != "New" {
		t.Fatalf("link %+v", l)
	}
	if _, pending, _ := e.store.Reverse.PendingOf("mem", c.ID); pending {
		t.Fatal("pending create left after the link")
	}

	// The PATCH that set the externalId fires an event: an echo.
	e.waitDelivered()
	e.drain()
	if st := e.applier.Stats(); st.Events != 2 || st.Echoes+st.Stale != 1 {
		t.Fatalf("stats %+v: want the PATCH's event dropped as an echo", st)
	}
	// The first event delivered again (under a new id), and catch-up:
	// nothing is created twice.
	e.event("again", workspace.EventContactUpdated, c)
	if _, err := e.applier.CatchUp(t.Context(), "mem"); err != nil {
		t.Fatal(err)
	}
	e.drain()
	if n := e.creates(); n != 1 {
		t.Fatalf("%d creates after redelivery, want 1", n)
	}
	calls, _ := e.mem.writes()
	if calls != 1 {
		t.Fatalf("%d write calls, want only the create", calls)
	}
	// The forward pass reads the new record and has nothing to do.
	before := e.patches()
	if sum := e.forward(); sum.Created != 0 || e.patches() != before {
		t.Fatalf("forward pass after the create: %v, %d PATCHes", sum, e.patches()-before)
	}
	if n := len(e.emu.Contacts()); n != 2 {
		t.Fatalf("workspace holds %d contacts, want 2", n)
	}
}

func TestCreateResumesFromItsPendingMarker(t *testing.T) {
	e := createEnv(t)
	c := e.appCreate("Rita", "Resume", "rita@example.com")
	// A crash after the record was created and its id recorded, before
	// the contact got its externalId.
	e.mem.put("r9", map[string]any{"id": "r9", "first_name": "Rita", "last_name": "Resume", "email": "rita@example.com"})
	if err := e.store.Reverse.PutPending(state.PendingCreate{Connector: "mem", ContactID: c.ID, RecordID: "r9",
		ContactUpdatedAt: c.UpdatedAt, Fields: map[string]string{"firstName": "Rita", "lastName": "Resume"}}); err != nil {
		t.Fatal(err)
	}
	e.event("redelivered", workspace.EventContactUpdated, c)
	e.drain()
	if calls, _ := e.mem.writes(); calls != 0 {
		t.Fatalf("%d write calls, want none: the record exists", calls)
	}
	got, _ := e.ws.GetContact(t.Context(), c.ID)
	if got.ExternalID == nil || *got.ExternalID != "r9" {
		t.Fatalf("contact externalId %v, want r9", got.ExternalID)
	}
	if l := e.link("r9"); l.ContactID != c.ID {
		t.Fatalf("link %+v", l)
	}
}

func TestCreateWithUnknownOutcomeIsNeverRepeated(t *testing.T) {
	e := createEnv(t)
	c := e.appCreate("Uma", "Unknown", "uma@example.com")
	// A crash between the pending create and its record id.
	if err := e.store.Reverse.PutPending(state.PendingCreate{Connector: "mem", ContactID: c.ID, ContactUpdatedAt: c.UpdatedAt}); err != nil {
		t.Fatal(err)
	}
	e.event("e1", workspace.EventContactUpdated, c)
	e.drain()
	c2 := e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Later")}})
	e.event("e2", workspace.EventContactUpdated, c2)
	e.drain()
	if n := e.creates(); n != 0 {
		t.Fatalf("%d creates, want none", n)
	}
	dls, _ := e.store.DeadLetters.List("mem")
	if len(dls) != 1 || dls[0].Operation != opCreate || !strings.Contains(dls[0].Reason, "may or may not") {
		t.Fatalf("dead letters %+v", dls)
	}
	if _, pending, _ := e.store.Reverse.PendingOf("mem", c.ID); !pending {
		t.Fatal("the pending create was dropped")
	}
	if n, _ := e.store.Inbox.Count(); n != 0 {
		t.Fatalf("%d events left", n)
	}
}

func TestRefusedCreateClearsItsMarker(t *testing.T) {
	e := createEnv(t)
	e.mem.failIDs[""] = errRefused // creates have no id
	c := e.appCreate("Rex", "Refused", "rex@example.com")
	e.event("e1", workspace.EventContactUpdated, c)
	e.drain()
	if _, pending, _ := e.store.Reverse.PendingOf("mem", c.ID); pending {
		t.Fatal("a refused create left its pending marker")
	}
	if dls, _ := e.store.DeadLetters.List("mem"); len(dls) != 1 || dls[0].Operation != opCreate {
		t.Fatalf("dead letters %+v", dls)
	}
	// Fixed: the next version of the contact is created.
	delete(e.mem.failIDs, "")
	c2 := e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Fixed")}})
	e.event("e2", workspace.EventContactUpdated, c2)
	e.drain()
	if got := e.mem.get("new1"); got.Fields["last_name"] != "Fixed" {
		t.Fatalf("record after the fix: %+v", got)
	}
}

func TestContactsOfOurSourceOrIgnoredAreNotCreated(t *testing.T) {
	e := newEnv(t, nil) // onWorkspaceCreate: ignore
	c := e.appCreate("Ian", "Ignored", "ian@example.com")
	e.event("e1", workspace.EventContactUpdated, c)
	e.drain()
	e2 := createEnv(t)
	own := emutest.NewApp(t, e2.emu.URL).Create(workspace.ContactCreate{
		Source: testSource, ExternalID: "x1", DefaultFields: workspace.DefaultFieldsInput{FirstName: "Own"}})
	e2.event("e1", workspace.EventContactUpdated, own)
	e2.drain()
	if e.creates()+e2.creates() != 0 {
		t.Fatal("a contact was created in the other system")
	}
	if e.applier.Stats().Ignored != 1 || e2.applier.Stats().Ignored != 1 {
		t.Fatalf("stats %+v %+v", e.applier.Stats(), e2.applier.Stats())
	}
}

// TestCreateFailuresFollowOneRule: a create that fails is settled by
// connector.Dispose like an update, with the create's own caution: a
// refusal is one dead letter naming the message and clears the pending
// marker; a 429 or a spent budget was not applied, so the marker is
// cleared and the create is sent again and made once it passes; an
// outcome-unknown failure is one dead letter and keeps the marker, never
// sent again.
func TestCreateFailuresFollowOneRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		sends   int  // creates sent
		created bool // the record exists at the end
		pending bool // the pending create is kept
		reason  string
	}{
		{name: "refused", err: errRefused, sends: 1, reason: "field last_name refused (code 23514)"},
		{name: "429", err: &remote.StatusError{API: "crm", Route: "POST /people", Status: 429}, sends: 3, created: true},
		{name: "budget spent", err: fmt.Errorf("crm daily budget: %w", connector.ErrBudgetSpent), sends: 3, created: true},
		{name: "outcome unknown", err: fmt.Errorf("%w: connection reset", connector.ErrOutcomeUnknown), sends: 1, pending: true, reason: "may or may not have been applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := createEnv(t)
			e.mem.failIDs[""] = tc.err // creates have no id
			c := e.appCreate("Cora", "Create", "cora@example.com")
			e.event("e1", workspace.EventContactUpdated, c)
			for range 2 {
				if _, err := e.applier.Round(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			delete(e.mem.failIDs, "") // the limit passed
			e.drain()
			if n := e.creates(); n != tc.sends {
				t.Errorf("%d creates sent, want %d", n, tc.sends)
			}
			if got := e.mem.get("new1").ID != ""; got != tc.created {
				t.Errorf("record created %v, want %v", got, tc.created)
			}
			if _, pending, _ := e.store.Reverse.PendingOf("mem", c.ID); pending != tc.pending {
				t.Errorf("pending create kept %v, want %v", pending, tc.pending)
			}
			if n, _ := e.store.Inbox.Count(); n != 0 {
				t.Errorf("%d events left", n)
			}
			dls, _ := e.store.DeadLetters.List("mem")
			if tc.reason == "" {
				if len(dls) != 0 {
					t.Fatalf("dead letters %+v, want none", dls)
				}
				return
			}
			if len(dls) != 1 || dls[0].Operation != opCreate || !strings.Contains(dls[0].Reason, tc.reason) {
				t.Fatalf("dead letters %+v, want one naming %q", dls, tc.reason)
			}
		})
	}
}

// TestTableEditBeforeCreateIsLinked: the record made for an app contact
// is edited in its system before the create is linked (a restart between
// the two): the link agrees on the values sent, so the forward pass
// brings the edit to the contact, and no write-back puts the contact's
// older value over it (issue 35: the poll soak, seed 2).
func TestTableEditBeforeCreateIsLinked(t *testing.T) {
	e := createEnv(t)
	c := e.appCreate("Rita", "Resume", "rita@example.com")
	e.mem.put("r9", map[string]any{"id": "r9", "first_name": "Rita", "last_name": "Resume", "email": "rita@example.com"})
	if err := e.store.Reverse.PutPending(state.PendingCreate{Connector: "mem", ContactID: c.ID, RecordID: "r9",
		ContactUpdatedAt: c.UpdatedAt, Fields: map[string]string{"firstName": "Rita", "lastName": "Resume", "emails.work": "rita@example.com"}}); err != nil {
		t.Fatal(err)
	}
	e.mem.put("r9", map[string]any{"first_name": "Table"})
	e.event("redelivered", workspace.EventContactUpdated, c)
	e.drain()
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want the table's edit patched to the contact", sum)
	}
	e.event("again", workspace.EventContactUpdated, e.contact("r9"))
	e.drain()
	if got := *e.contact("r9").DefaultFields.FirstName; got != "Table" {
		t.Errorf("contact's firstName = %q, want the table's edit", got)
	}
	if got := e.mem.get("r9").Fields["first_name"]; got != "Table" {
		t.Errorf("record's first_name = %v, want the table's edit", got)
	}
}
