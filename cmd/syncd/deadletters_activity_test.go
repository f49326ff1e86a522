package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestDeadLettersRetryActivityOnStateFile: a text HubSpot refused is a
// dead letter that `syncd deadletters retry` writes again on the state
// file (no daemon): the text is logged once on the linked contact and
// the letter is gone.
func TestDeadLettersRetryActivityOnStateFile(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(hs.Close)
	const number = "+15550001111"
	contact := hs.Add(map[string]string{"firstname": "Ada", "phone": number})
	dir := t.TempDir()
	statePath := filepath.Join(dir, "syncd.db")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: statePath},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{Name: "hs", Type: "hubspot", Schedule: "@every 1h",
			Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL},
			Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{
				"firstName": configfile.From("firstname"), "phoneNumbers.mobile": configfile.From("phone")}},
			Activities: map[string]any{"log": []string{"messages"}},
		}},
	}
	cfg := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	if out, serr, err := runMain(t, "run", "--once", "--config", cfg); err != nil {
		t.Fatalf("first run: %v\n%s%s", err, out, serr)
	}

	// A text from the contact's number, acknowledged as the receiver
	// would queue it; HubSpot refuses its activity.
	st, err := state.Open(statePath, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msg := workspace.Message{ID: "AM0000000000000001", From: number, To: []string{emulator.PhoneNumber}, Text: "my pin is 4321",
		PhoneNumberID: emulator.PhoneNumberID, Direction: workspace.Incoming, Status: "received", CreatedAt: time.Now().UTC()}
	raw, _ := json.Marshal(msg)
	body, _ := json.Marshal(map[string]any{"id": "EV1", "object": "event", "type": workspace.EventMessageReceived, "data": workspace.EventData{Object: raw}})
	if _, _, err := st.Activities.Enqueue(state.ActivityEvent{ID: "EV1", Type: workspace.EventMessageReceived, Body: body}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	hs.Inject(hubspotemu.RouteEngagementCreate, hubspotemu.Fault{Status: 400})
	if out, serr, err := runMain(t, "run", "--once", "--config", cfg); err != nil {
		t.Fatalf("second run: %v\n%s%s", err, out, serr)
	}
	if n := len(hs.Engagements(hubspotemu.ObjectCommunications)); n != 0 {
		t.Fatalf("%d texts logged while HubSpot refuses them", n)
	}
	out, serr, err := runMain(t, "deadletters", "list", "--json", "--config", cfg)
	if err != nil {
		t.Fatalf("deadletters list: %v\n%s", err, serr)
	}
	var dl struct {
		ID        uint64 `json:"id"`
		Operation string `json:"operation"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &dl); err != nil || dl.Operation != activity.OperationActivity {
		t.Fatalf("deadletters list --json = %q (%v), want one activity letter", out, err)
	}

	out, serr, err = runMain(t, "deadletters", "retry", strconv.FormatUint(dl.ID, 10), "--config", cfg)
	if err != nil {
		t.Fatalf("deadletters retry: %v\n%s%s", err, out, serr)
	}
	if !strings.Contains(out, "the call or text went through") {
		t.Errorf("retry said %q", out)
	}
	texts := hs.Engagements(hubspotemu.ObjectCommunications)
	if len(texts) != 1 || len(texts[0].Contacts) != 1 || texts[0].Contacts[0] != contact {
		t.Errorf("texts after the retry = %+v, want one on contact %s", texts, contact)
	}
	if out, _, _ := runMain(t, "deadletters", "list", "--json", "--config", cfg); strings.TrimSpace(out) != "" {
		t.Errorf("letters after the retry: %s", out)
	}
}
