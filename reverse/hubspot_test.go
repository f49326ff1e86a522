package reverse

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// TestHubSpotEditsGoInBatchCalls queues 150 workspace edits and applies
// them in one round: HubSpot sees two batch updates (100 + 50) and two
// batch reads, and the forward pass that follows writes nothing back to
// the workspace.
func TestHubSpotEditsGoInBatchCalls(t *testing.T) {
	const n = 150
	srv := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(srv.Close)
	for i := range n {
		srv.Add(map[string]string{"email": fmt.Sprintf("c%d@example.com", i), "firstname": fmt.Sprint("First", i), "lastname": fmt.Sprint("Last", i)})
	}
	time.Sleep(20 * time.Millisecond) // the connector opens its read windows on its own clock

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "firstname"}, "lastName": {From: "lastname"}, "emails.work": {From: "email"},
	})
	set := hubspot.NewSettings()
	set.Token, set.BaseURL, set.RateLimit, set.Lookback = hubspot.Secret(srv.Token()), srv.URL, 100000, 0
	typ, _ := connector.Lookup(hubspot.TypeName)
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, hubspot.TypeName, src, &Target{
		Name: "crm", Source: "custom-hubspot", Mapper: m, Writer: src.(connector.Writer), Direction: mapping.Both}, n)
	a := crm.applier

	// 150 edits in the app while no webhook is subscribed: catch-up
	// queues them all.
	for _, c := range e.emu.Contacts() {
		e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited-" + *c.ExternalID)}})
	}
	if q, err := a.CatchUp(context.Background(), "crm"); err != nil || q != n {
		t.Fatalf("catch-up queued %d, %v", q, err)
	}
	before := srv.Stats()
	if err := a.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := srv.Stats()
	updates := after.Requests[hubspotemu.RouteBatchUpdate] - before.Requests[hubspotemu.RouteBatchUpdate]
	reads := after.Requests[hubspotemu.RouteBatchRead] - before.Requests[hubspotemu.RouteBatchRead]
	if updates != 2 || reads != 2 {
		t.Fatalf("%d batch update and %d batch read calls for %d edits, want 2 and 2", updates, reads, n)
	}
	if st := a.Stats(); st.Written != n || st.Rounds != 1 {
		t.Fatalf("applier %+v, want %d written in one round", st, n)
	}
	for _, c := range srv.Contacts() {
		if c.Properties["lastname"] != "Edited-"+c.ID {
			t.Fatalf("HubSpot contact %s lastname %q", c.ID, c.Properties["lastname"])
		}
	}
	// The forward pass reads the changed contacts: no workspace write.
	time.Sleep(20 * time.Millisecond) // the connector opens its read windows on its own clock
	patches := e.patches()
	if sum := crm.forward(); sum.Updated != 0 || sum.Unchanged < n || e.patches() != patches {
		t.Fatalf("forward pass after the write-back: %v, %d PATCHes", sum, e.patches()-patches)
	}
}

// TestHubSpotWriteBackFailures: app edits written back to HubSpot. An
// update HubSpot refuses with a 400 VALIDATION_ERROR (a property the
// portal lacks) is sent in one call and set aside as one dead letter
// naming the property and HubSpot's message, however many rounds follow;
// an update answered 502 once is sent again and written.
func TestHubSpotWriteBackFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		role    string // the to-crm property the workspace's role goes to
		faults  []hubspotemu.Fault
		calls   int // batch update calls
		written bool
		reason  []string
	}{
		{name: "validation error", role: "tier", calls: 1,
			reason: []string{"field tier refused (code VALIDATION_ERROR)", `Property "tier" does not exist`}},
		{name: "502, then written", role: "jobtitle", faults: []hubspotemu.Fault{{Status: 502}}, calls: 2, written: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
			t.Cleanup(srv.Close)
			for i := range 2 {
				srv.Add(map[string]string{"email": fmt.Sprintf("c%d@example.com", i), "firstname": fmt.Sprint("First", i), "lastname": fmt.Sprint("Last", i)})
			}
			time.Sleep(20 * time.Millisecond) // the connector opens its read windows on its own clock

			e := newEnv(t, nil)
			m, err := mapping.Compile(mapping.Spec{Fields: map[string]mapping.FieldSpec{
				"firstName": {From: "firstname"}, "lastName": {From: "lastname"}, "emails.work": {From: "email"},
				"role": {From: tc.role, Direction: "to-crm"},
			}}, mapping.Both, nil)
			if err != nil {
				t.Fatal(err)
			}
			set := hubspot.NewSettings()
			set.Token, set.BaseURL, set.RateLimit, set.Lookback = hubspot.Secret(srv.Token()), srv.URL, 100000, 0
			typ, _ := connector.Lookup(hubspot.TypeName)
			src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { src.Close() })
			crm := e.syncCRM(t, hubspot.TypeName, src, &Target{
				Name: "crm", Source: "custom-hubspot", Mapper: m, Writer: src.(connector.Writer), Direction: mapping.Both}, 2)
			a := crm.applier

			c := e.emu.Contacts()[0]
			e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Role: workspace.Some("Gold")}})
			if q, err := a.CatchUp(context.Background(), "crm"); err != nil || q != 1 {
				t.Fatalf("catch-up queued %d, %v", q, err)
			}
			srv.Inject(hubspotemu.RouteBatchUpdate, tc.faults...)
			before := srv.Stats()
			for range DefaultMaxAttempts + 2 {
				if _, err := a.Round(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if calls := srv.Stats().Requests[hubspotemu.RouteBatchUpdate] - before.Requests[hubspotemu.RouteBatchUpdate]; calls != tc.calls {
				t.Errorf("%d batch update calls, want %d", calls, tc.calls)
			}
			dls, err := e.store.DeadLetters.List("crm")
			if err != nil {
				t.Fatal(err)
			}
			hc, _ := srv.Contact(*c.ExternalID)
			st := a.Stats()
			if tc.written {
				if len(dls) != 0 || st.Written != 1 || hc.Properties["jobtitle"] != "Gold" {
					t.Fatalf("dead letters %+v, applier %+v, HubSpot contact %+v: want the role written", dls, st, hc.Properties)
				}
				return
			}
			if len(dls) != 1 || dls[0].Key != c.ID || st.Failed != 1 || st.Written != 0 {
				t.Fatalf("dead letters %+v, applier %+v: want one for contact %s", dls, st, c.ID)
			}
			for _, want := range tc.reason {
				if !strings.Contains(dls[0].Reason, want) {
					t.Errorf("dead letter reason %q does not name %q", dls[0].Reason, want)
				}
			}
		})
	}
}
