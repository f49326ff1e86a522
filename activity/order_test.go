package activity_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// event is a delivery's body of typ about resource.
func event(t *testing.T, typ string, resource any) []byte {
	t.Helper()
	raw, err := json.Marshal(resource)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"id": "EV", "object": "event", "type": typ, "data": workspace.EventData{Object: raw}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestLaterEventsBeforeTheCall: a call's summary and transcript that
// arrive before call.completed wait in its item, and the call's one
// activity on the linked HubSpot contact holds them; a number no link
// knows is skipped and counted.
func TestLaterEventsBeforeTheCall(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(hs.Close)
	contact := hs.Add(map[string]string{"firstname": "Ada", "phone": "+15550001111"})
	set := hubspot.NewSettings()
	set.Token, set.BaseURL = hubspot.Secret(hs.Token()), hs.URL
	src, err := hubspot.Open(context.Background(), connector.Options{Name: "crm", Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	if err := st.Links.Put(state.Link{Connector: "crm", ExternalID: contact, ContactID: "C1", RecordID: contact,
		Fields: map[string]string{"phoneNumbers.mobile": "+15550001111"}}); err != nil {
		t.Fatal(err)
	}
	lg, err := activity.New(activity.Options{Queue: st.Activities, Store: activity.StoreOf(st),
		Targets: []*activity.Target{{Name: "crm", Writer: src, Log: []policy.ActivityLog{policy.LogCalls, policy.LogSummaries, policy.LogTranscripts}}}})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	call := workspace.Call{ID: "AC1", PhoneNumberID: "PN1", Participants: []string{"+15550001111"}, Direction: "incoming", Status: "completed", Duration: 60, CreatedAt: at}
	stranger := call
	stranger.ID, stranger.Participants = "AC2", []string{"+15559999999"}
	for i, ev := range []struct {
		id, typ  string
		resource any
	}{
		{"e1", workspace.EventCallSummaryCompleted, workspace.CallSummary{CallID: "AC1", Status: "completed", Summary: []string{"Wants a demo"}}},
		{"e2", workspace.EventCallTranscriptCompleted, workspace.CallTranscript{CallID: "AC1", Status: "completed", Dialogue: []workspace.DialogueLine{{Content: "Hi there", Identifier: "+15550001111"}}}},
		{"e3", workspace.EventCallCompleted, call},
		{"e4", workspace.EventCallCompleted, stranger},
	} {
		if _, _, err := st.Activities.Enqueue(state.ActivityEvent{ID: ev.id, Type: ev.typ, Body: event(t, ev.typ, ev.resource)}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			// Handled before the call is known: nothing written yet.
			if err := lg.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := len(hs.Engagements(hubspotemu.ObjectCalls)); n != 0 {
				t.Fatalf("%d calls written before the call was known", n)
			}
		}
	}
	if err := lg.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := hs.Engagements(hubspotemu.ObjectCalls)
	if len(calls) != 1 || calls[0].Contacts[0] != contact {
		t.Fatalf("calls = %+v, want one on contact %s", calls, contact)
	}
	if body := calls[0].Properties["hs_call_body"]; !strings.Contains(body, "Wants a demo") || !strings.Contains(body, "Hi there") {
		t.Errorf("hs_call_body = %q, want the summary and the transcript", body)
	}
	c, err := st.Activities.Counts("crm")
	if err != nil || c.Logged != 1 || c.Skipped != 1 {
		t.Errorf("counts = %+v, %v; want 1 logged, 1 skipped", c, err)
	}
	if n, _ := st.Activities.CountPending(); n != 0 {
		t.Errorf("%d events left in the queue", n)
	}
}
