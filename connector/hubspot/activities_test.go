package hubspot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// TestActivitiesAsDocumented: a call becomes a calls object associated
// with the contact (type 194), a text a communications object with
// channel SMS (type 81), both carrying the key property syncd creates;
// FindActivity finds them by key; a later write replaces the call's
// properties; refusals and missing objects are classified.
func TestActivitiesAsDocumented(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{}, nil)
	ctx := context.Background()
	contact := f.srv.Add(map[string]string{"firstname": "Ada", "phone": "+15550001111"})
	f.srv.AddOwner("agent@example.com")
	at := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)

	call := connector.Activity{Key: "call:AC1:" + contact, Kind: connector.ActivityCall, RecordID: contact, SourceID: "AC1",
		Direction: connector.DirectionIncoming, At: at, From: "+15550001111", Status: "completed", Duration: 42 * time.Second,
		OwnerEmail: "Agent@example.com"}
	if id, err := f.src.FindActivity(ctx, connector.ActivityCall, call.Key, contact); err != nil || id != "" {
		t.Fatalf("find before any write = %q, %v", id, err)
	}
	id, err := f.src.WriteActivity(ctx, "", call)
	if err != nil {
		t.Fatal(err)
	}
	found, err := f.src.FindActivity(ctx, connector.ActivityCall, call.Key, contact)
	if err != nil || found != id {
		t.Fatalf("find after write = %q, %v; want %q", found, err, id)
	}
	call.Summary, call.RecordingURL = []string{"Wants a <quote>"}, "https://files.example/r.mp3"
	if got, err := f.src.WriteActivity(ctx, id, call); err != nil || got != id {
		t.Fatalf("update = %q, %v", got, err)
	}
	calls := f.srv.Engagements(hubspotemu.ObjectCalls)
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	p := calls[0].Properties
	want := map[string]string{"hs_call_direction": "INBOUND", "hs_call_status": "COMPLETED", "hs_call_duration": "42000",
		"hs_call_from_number": "+15550001111", "hs_timestamp": "2026-11-27T09:30:00.000Z", ActivityKeyProperty: call.Key,
		"hs_call_recording_url": "https://files.example/r.mp3", "hubspot_owner_id": "70000"}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	if !strings.Contains(p["hs_call_body"], "Wants a &lt;quote&gt;") {
		t.Errorf("hs_call_body = %q", p["hs_call_body"])
	}
	if len(calls[0].Contacts) != 1 || calls[0].Contacts[0] != contact {
		t.Errorf("call associated with %v", calls[0].Contacts)
	}

	text := connector.Activity{Key: "message:AM1:" + contact, Kind: connector.ActivityMessage, RecordID: contact,
		Direction: connector.DirectionIncoming, At: at, From: "+15550001111", Text: "hi there"}
	if _, err := f.src.WriteActivity(ctx, "", text); err != nil {
		t.Fatal(err)
	}
	comms := f.srv.Engagements(hubspotemu.ObjectCommunications)
	if len(comms) != 1 || comms[0].Properties["hs_communication_channel_type"] != "SMS" || comms[0].Properties["hs_communication_body"] != "<p>hi there</p>" ||
		comms[0].Contacts[0] != contact {
		t.Errorf("communications = %+v", comms)
	}

	gone := call
	gone.Key, gone.RecordID = "call:AC2:999999", "999999"
	_, err = f.src.WriteActivity(ctx, "", gone)
	var refused *connector.RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("a call on a missing contact: %v, want a refusal", err)
	}
	if _, err := f.src.WriteActivity(ctx, "424242", call); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("an update of a missing call: %v, want ErrNotFound", err)
	}
}
