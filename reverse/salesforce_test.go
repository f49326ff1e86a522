package reverse

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace"
)

// sfWorld is a Salesforce test org synced forward into the workspace
// emulator, with an applier writing workspace edits back.
type sfWorld struct {
	e       *env
	org     *salesforceemu.Server
	src     *salesforce.Source
	applier *Applier
	forward func() reconcile.Summary
}

func newSFWorld(t *testing.T, n int, opts salesforceemu.Options) *sfWorld {
	return newSFWorldMapped(t, n, opts, mapping.FieldSpec{From: "LastName"}, "ignore")
}

func newSFWorldMapped(t *testing.T, n int, opts salesforceemu.Options, lastName mapping.FieldSpec, onCreate policy.Create) *sfWorld {
	t.Helper()
	org := salesforceemu.NewServer(opts)
	t.Cleanup(org.Close)
	org.Advance(time.Second)
	for i := range n {
		org.Add("Contact", map[string]any{"FirstName": fmt.Sprint("First", i), "LastName": fmt.Sprint("Last", i), "Email": fmt.Sprintf("c%d@example.com", i)})
	}
	org.Advance(time.Second)

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "FirstName"}, "lastName": lastName, "emails.work": {From: "Email"},
	})
	set := salesforce.NewSettings()
	set.LoginURL = org.LoginURL
	set.ClientID, set.ClientSecret = salesforce.Secret(org.ClientID()), salesforce.Secret(org.ClientSecret())
	set.RateLimit, set.Settle = 100000, 0
	src, err := salesforce.Open(context.Background(), connector.Options{Name: "sf", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	src.SetClock(org.Now)
	crm := e.syncCRM(t, salesforce.TypeName, src, &Target{
		Name: "sf", Source: "custom-salesforce", Mapper: m, Writer: src, Direction: mapping.Both, OnWorkspaceCreate: onCreate}, n)
	return &sfWorld{e: e, org: org, src: src, applier: crm.applier, forward: crm.forward}
}

// editAll renames every contact in the app (lastName Edited-<record id>,
// or Refused-... for the ids in refuse) and queues the edits.
func (w *sfWorld) editAll(t *testing.T, refuse map[string]bool) {
	t.Helper()
	n := 0
	for _, c := range w.e.emu.Contacts() {
		name := "Edited-" + *c.ExternalID
		if refuse[*c.ExternalID] {
			name = "Refused-" + *c.ExternalID
		}
		w.e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some(name)}})
		n++
	}
	if q, err := w.applier.CatchUp(context.Background(), "sf"); err != nil || q != n {
		t.Fatalf("catch-up queued %d of %d, %v", q, n, err)
	}
}

// TestSalesforceEditsGoInCompositeCalls writes 250 workspace edits back:
// two sObject Collections updates (200 + 50). The org's validation rule
// refuses one record: the other 249 are written, and the refused one is
// one dead letter naming the field, never sent again (a definite refusal
// is permanent: connector.Dispose). The forward pass after it writes
// nothing to the workspace (syncd's own writes moved SystemModstamp).
func TestSalesforceEditsGoInCompositeCalls(t *testing.T) {
	const n = 250
	rule := salesforceemu.ValidationRule{Name: "No_Refused", Field: "LastName", Message: "Last name may not start with Refused",
		Refuse: func(rec map[string]any) bool {
			s, _ := rec["LastName"].(string)
			return strings.HasPrefix(s, "Refused")
		}}
	w := newSFWorld(t, n, salesforceemu.Options{ValidationRules: []salesforceemu.ValidationRule{rule}})
	refused := w.org.Records("Contact")[77].ID
	w.org.Advance(time.Second)
	w.editAll(t, map[string]bool{refused: true})

	before := w.org.Stats()
	if err := w.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := w.org.Stats()
	updates := after.Requests[salesforceemu.RouteUpdate] - before.Requests[salesforceemu.RouteUpdate]
	t.Logf("%d edits: %d composite update calls, %d queries; applier %+v", n, updates,
		after.Requests[salesforceemu.RouteQueryAll]-before.Requests[salesforceemu.RouteQueryAll], w.applier.Stats())
	if updates > 2 {
		t.Errorf("%d composite update calls for %d edits, want at most 2", updates, n)
	}
	for _, r := range w.org.Records("Contact") {
		want := "Edited-" + r.ID
		if r.ID == refused {
			want = "Last77"
		}
		if r.Fields["LastName"] != want {
			t.Errorf("Contact %s LastName %v, want %s", r.ID, r.Fields["LastName"], want)
		}
	}
	// The refused record was set aside at once: a round more sends
	// nothing.
	for round := 0; round < DefaultMaxAttempts; round++ {
		if n, _ := w.e.store.Inbox.Count(); n == 0 {
			break
		}
		if _, err := w.applier.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	retries := w.org.Stats().Requests[salesforceemu.RouteUpdate] - after.Requests[salesforceemu.RouteUpdate]
	t.Logf("the refused record was sent again in %d calls before it was set aside", retries)
	dls, err := w.e.store.DeadLetters.List("sf")
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "LastName") || !strings.Contains(dls[0].Reason, "FIELD_CUSTOM_VALIDATION_EXCEPTION") {
		t.Fatalf("dead letters %+v, want one naming LastName and the validation rule", dls)
	}
	if st := w.applier.Stats(); st.Written != n-1 || st.Failed != 1 || retries != 0 {
		t.Errorf("applier %+v, refused record sent again in %d calls; want %d written, 1 failed, none sent again", st, retries, n-1)
	}

	w.org.Advance(time.Second)
	patches := w.e.patches()
	if sum := w.forward(); sum.Updated != 0 || w.e.patches() != patches {
		t.Fatalf("forward pass after the write-back: %v, %d PATCHes", sum, w.e.patches()-patches)
	}
}

// TestSalesforceSessionExpiryMidWrite expires the session in the middle
// of the write-back (after a few calls): one token call renews it, the
// refused call is repeated, and every edit is written exactly once.
func TestSalesforceSessionExpiryMidWrite(t *testing.T) {
	const n = 450 // three composite calls
	w := newSFWorld(t, n, salesforceemu.Options{})
	w.org.Advance(time.Second)
	w.editAll(t, nil)

	tokens := w.org.TokenCalls()
	w.org.ExpireSessions()
	before := w.org.Stats()
	if err := w.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := w.org.Stats()
	if got := w.org.TokenCalls() - tokens; got != 1 {
		t.Errorf("%d token calls after the session expired, want 1", got)
	}
	refusedCalls := 0
	for _, r := range []salesforceemu.Route{salesforceemu.RouteUpdate, salesforceemu.RouteQueryAll} {
		refusedCalls += after.Responses[r][401] - before.Responses[r][401]
	}
	if refusedCalls != 1 {
		t.Errorf("%d calls answered 401, want the one that met the expiry", refusedCalls)
	}
	for _, r := range w.org.Records("Contact") {
		if r.Fields["LastName"] != "Edited-"+r.ID {
			t.Errorf("Contact %s LastName %v: the edit was lost", r.ID, r.Fields["LastName"])
		}
	}
	if st := w.applier.Stats(); st.Written != n || st.Failed != 0 {
		t.Errorf("applier %+v, want %d written", st, n)
	}
	if ok := after.Responses[salesforceemu.RouteUpdate][200] - before.Responses[salesforceemu.RouteUpdate][200]; ok != 3 {
		t.Errorf("%d composite updates applied, want 3 (no write repeated)", ok)
	}
}

// TestSalesforceLastNameFallback creates, in Salesforce, contacts made in
// the workspace's app without a last name: without a fallback the create
// is refused before any call and set aside as a dead letter naming
// LastName; with the mapping's fallback the Contact is created with it,
// and the forward pass does not bring the stand-in back.
func TestSalesforceLastNameFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lastName mapping.FieldSpec
	}{
		{"no fallback", mapping.FieldSpec{From: "LastName"}},
		{"fallback", mapping.FieldSpec{From: "LastName", Fallback: "(no last name)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSFWorldMapped(t, 1, salesforceemu.Options{}, tc.lastName, "create")
			c := w.e.appCreate("Nora", "", "nora@example.com")
			w.e.event("ev-nora", workspace.EventContactUpdated, c)
			before := w.org.Stats()
			if err := w.applier.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			creates := w.org.Stats().Requests[salesforceemu.RouteCreate] - before.Requests[salesforceemu.RouteCreate]
			dls, _ := w.e.store.DeadLetters.List("sf")
			recs := w.org.Records("Contact")
			if tc.lastName.Fallback == "" {
				if creates != 0 || len(recs) != 1 || len(dls) != 1 || !strings.Contains(dls[0].Reason, "LastName") || !strings.Contains(dls[0].Reason, "fallback") {
					t.Fatalf("%d create calls, %d Contacts, dead letters %+v; want none created and one dead letter naming LastName and the fix", creates, len(recs), dls)
				}
				return
			}
			if creates != 1 || len(recs) != 2 || len(dls) != 0 || recs[1].Fields["LastName"] != "(no last name)" || recs[1].Fields["FirstName"] != "Nora" {
				t.Fatalf("%d create calls, Contacts %+v, dead letters %+v", creates, recs, dls)
			}
			w.org.Advance(time.Second)
			patches := w.e.patches()
			if sum := w.forward(); sum.Updated != 0 || w.e.patches() != patches {
				t.Errorf("forward pass after the create: %v, %d PATCHes (the stand-in must not reach the workspace)", sum, w.e.patches()-patches)
			}
		})
	}
}

// TestSalesforceWholeCallRefusalIsOneDeadLetter has Salesforce refuse a
// write-back call as a whole (400 FIELD_CUSTOM_VALIDATION_EXCEPTION on
// the call, as a validation rule raised for one record would be when the
// org answers for the whole request), and again for each part holding
// one record: the connector splits the call until the refusal is that
// record's alone; it becomes one dead letter naming Salesforce's field,
// code and message, never sent again, and the other seven edits are
// written.
func TestSalesforceWholeCallRefusalIsOneDeadLetter(t *testing.T) {
	const n = 8
	w := newSFWorld(t, n, salesforceemu.Options{})
	w.org.Advance(time.Second)
	w.editAll(t, nil)
	// The call of 8, then the halves holding the first record (4, 2, 1).
	w.org.Fail(salesforceemu.RouteUpdate, 4, 400, "FIELD_CUSTOM_VALIDATION_EXCEPTION", "Last name is locked for this account", "LastName")
	before := w.org.Stats()
	if err := w.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range DefaultMaxAttempts {
		if _, err := w.applier.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	calls := w.org.Stats().Requests[salesforceemu.RouteUpdate] - before.Requests[salesforceemu.RouteUpdate]
	dls, err := w.e.store.DeadLetters.List("sf")
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "LastName") || !strings.Contains(dls[0].Reason, "FIELD_CUSTOM_VALIDATION_EXCEPTION") ||
		!strings.Contains(dls[0].Reason, "Last name is locked for this account") {
		t.Fatalf("dead letters %+v, want one naming LastName, the code and Salesforce's message", dls)
	}
	written := 0
	for _, r := range w.org.Records("Contact") {
		if r.Fields["LastName"] == "Edited-"+r.ID {
			written++
		}
	}
	if st := w.applier.Stats(); written != n-1 || st.Written != n-1 || st.Failed != 1 || calls != 7 {
		t.Errorf("%d records written, applier %+v, %d update calls; want %d written, 1 failed, 7 calls (8, 4, 2, 1 refused; 1, 2, 4 written)",
			written, st, calls, n-1)
	}
}
