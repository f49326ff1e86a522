package activity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestCatchUpSkipsLoggedTexts: texts whose deliveries were handled
// (logged on the linked HubSpot contact) are not queued again by a
// catch-up pass that lists them, as calls are not.
func TestCatchUpSkipsLoggedTexts(t *testing.T) {
	ctx := context.Background()
	st, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	emu := emulator.NewServer(emulator.Options{Rate: -1, APIKey: "k"})
	t.Cleanup(emu.Close)
	ws, err := workspace.NewClient(workspace.ClientOptions{BaseURL: emu.URL, APIKey: "k", RateLimit: 1000, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(hs.Close)
	const number = "+15550001111"
	contact := hs.Add(map[string]string{"firstname": "Ada", "phone": number})
	set := hubspot.NewSettings()
	set.Token, set.BaseURL = hubspot.Secret(hs.Token()), hs.URL
	src, err := hubspot.Open(ctx, connector.Options{Name: "crm", Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	if err := st.Links.Put(state.Link{Connector: "crm", ExternalID: contact, ContactID: "C1", RecordID: contact,
		Fields: map[string]string{"phoneNumbers.mobile": number}}); err != nil {
		t.Fatal(err)
	}
	lg, err := activity.New(activity.Options{Queue: st.Activities, Store: activity.StoreOf(st), Workspace: ws,
		Targets: []*activity.Target{{Name: "crm", Writer: src, Log: []policy.ActivityLog{policy.LogMessages}}}})
	if err != nil {
		t.Fatal(err)
	}

	const texts = 5
	for i := range texts {
		in := map[string]any{"from": number, "to": []string{emulator.PhoneNumber}, "text": "hello", "direction": "incoming"}
		if i%2 == 1 {
			in = map[string]any{"from": emulator.PhoneNumber, "to": []string{number}, "text": "hello", "direction": workspace.Outgoing}
		}
		body, _ := json.Marshal(in)
		resp, err := http.Post(emu.URL+"/_emulator/app/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("make text: %s", resp.Status)
		}
	}
	// Each text arrives as its delivery (a webhook-id of its own).
	page, err := ws.ListMessages(ctx, workspace.ActivityPageParams{PhoneNumberID: emulator.PhoneNumberID, Participant: number, MaxResults: workspace.MaxActivityPageSize})
	if err != nil || len(page.Data) != texts {
		t.Fatalf("listed %d texts, %v; want %d", len(page.Data), err, texts)
	}
	for _, m := range page.Data {
		typ := workspace.EventMessageReceived
		if m.Direction == workspace.Outgoing {
			typ = workspace.EventMessageDelivered
		}
		if _, _, err := st.Activities.Enqueue(state.ActivityEvent{ID: "delivery-" + m.ID, Type: typ, Body: event(t, typ, m)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := lg.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(hs.Engagements(hubspotemu.ObjectCommunications)); n != texts {
		t.Fatalf("%d texts logged, want %d", n, texts)
	}

	cs, err := lg.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Listings == 0 {
		t.Fatalf("catch-up listed nothing: %+v", cs)
	}
	if n, _ := st.Activities.CountPending(); cs.Queued != 0 || n != 0 {
		t.Errorf("catch-up queued %d (queue holds %d) of %d texts already logged, want none", cs.Queued, n, texts)
	}
}
