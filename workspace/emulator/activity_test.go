package emulator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestCallsAndTextsDeliverAndList: a call made in the app is listed by
// GET /v1/calls (number and one participant) and delivers call.completed;
// its summary, transcript and recording deliver their events with the
// published shapes; texts deliver message.received or message.delivered.
func TestCallsAndTextsDeliverAndList(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newServer(t, emulator.Options{})
	createWebhook(t, s.URL, map[string]any{"url": rc.URL, "events": workspace.ActivityEvents})
	app := emulator.App{BaseURL: s.URL}
	ctx := context.Background()
	const ada, bob = "+15550001111", "+15550002222"

	id, err := app.Call(ctx, emulator.CallIn{Participants: []string{ada}, Direction: "incoming", Duration: 42, UserID: "US1"})
	if err != nil || id == "" {
		t.Fatalf("call: %q, %v", id, err)
	}
	if err := app.Summarize(ctx, id, []string{"Wants a quote"}, []string{"Send it"}); err != nil {
		t.Fatal(err)
	}
	if err := app.Transcribe(ctx, id, []workspace.DialogueLine{{Content: "Hello", Identifier: ada, Start: 0, End: 1.5}}); err != nil {
		t.Fatal(err)
	}
	if err := app.Record(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Message(ctx, emulator.MessageIn{From: bob, To: []string{emulator.PhoneNumber}, Text: "hi", Direction: "incoming"}); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Message(ctx, emulator.MessageIn{From: emulator.PhoneNumber, To: []string{bob}, Text: "hello", Direction: "outgoing"}); err != nil {
		t.Fatal(err)
	}
	hits := rc.wait(t, 6)
	want := []string{"call.completed", "call.summary.completed", "call.transcript.completed", "call.recording.completed", "message.received", "message.delivered"}
	for i, h := range hits {
		if h.event.Type != want[i] {
			t.Fatalf("delivery %d is %s, want %s", i, h.event.Type, want[i])
		}
	}
	var c workspace.Call
	if err := json.Unmarshal(hits[0].event.Data.Object, &c); err != nil || c.ID != id || c.Object != "call" || c.Duration != 42 ||
		c.Participants[0] != ada || c.PhoneNumberID != emulator.PhoneNumberID {
		t.Errorf("call.completed carries %+v (%v)", c, err)
	}
	var sum workspace.CallSummary
	if err := json.Unmarshal(hits[1].event.Data.Object, &sum); err != nil || sum.CallID != id || sum.Summary[0] != "Wants a quote" {
		t.Errorf("call.summary.completed carries %+v (%v)", sum, err)
	}
	var rec workspace.Call
	if err := json.Unmarshal(hits[3].event.Data.Object, &rec); err != nil || rec.ID != id || len(rec.Media) != 1 || rec.Media[0].URL == "" {
		t.Errorf("call.recording.completed carries %+v (%v)", rec, err)
	}
	var m workspace.Message
	if err := json.Unmarshal(hits[5].event.Data.Object, &m); err != nil || m.Direction != "outgoing" || m.To[0] != bob || m.Text != "hello" {
		t.Errorf("message.delivered carries %+v (%v)", m, err)
	}

	page := data[[]workspace.Call](t, call(t, s.URL, "GET", "/v1/calls?phoneNumberId="+emulator.PhoneNumberID+"&participants=%2B15550001111", nil), http.StatusOK)
	if len(page) != 1 || page[0].ID != id {
		t.Errorf("GET /v1/calls = %+v", page)
	}
	if r := call(t, s.URL, "GET", "/v1/calls?phoneNumberId="+emulator.PhoneNumberID, nil); r.status != http.StatusBadRequest {
		t.Errorf("a listing without a participant answered %d, want 400", r.status)
	}
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if got := data[[]workspace.Call](t, call(t, s.URL, "GET", "/v1/calls?phoneNumberId="+emulator.PhoneNumberID+"&participants=%2B15550001111&createdAfter="+later, nil), http.StatusOK); len(got) != 0 {
		t.Errorf("createdAfter an hour from now listed %d calls", len(got))
	}
	msgs := data[[]workspace.Message](t, call(t, s.URL, "GET", "/v1/messages?phoneNumberId="+emulator.PhoneNumberID+"&participants=%2B15550002222", nil), http.StatusOK)
	if len(msgs) != 2 {
		t.Errorf("GET /v1/messages listed %d texts, want 2", len(msgs))
	}
	tr := data[workspace.CallTranscript](t, call(t, s.URL, "GET", "/v1/call-transcripts/"+id, nil), http.StatusOK)
	if len(tr.Dialogue) != 1 || tr.Dialogue[0].Content != "Hello" {
		t.Errorf("transcript = %+v", tr)
	}
	recs := data[[]workspace.CallRecording](t, call(t, s.URL, "GET", "/v1/call-recordings/"+id, nil), http.StatusOK)
	if len(recs) != 1 || recs[0].Type != "audio/mpeg" {
		t.Errorf("recordings = %+v", recs)
	}
}

// TestWebhookDuplicates: with WebhookDuplicates 1 every event is
// delivered twice, with the same webhook-id.
func TestWebhookDuplicates(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newServer(t, emulator.Options{WebhookDuplicates: 1})
	createWebhook(t, s.URL, map[string]any{"url": rc.URL, "events": []string{"message.received"}})
	app := emulator.App{BaseURL: s.URL}
	if _, err := app.Message(context.Background(), emulator.MessageIn{From: "+15550003333", To: []string{emulator.PhoneNumber}, Text: "x", Direction: "incoming"}); err != nil {
		t.Fatal(err)
	}
	hits := rc.wait(t, 2)
	if hits[0].header.Get("webhook-id") != hits[1].header.Get("webhook-id") {
		t.Errorf("a duplicate has its own webhook-id: %q, %q", hits[0].header.Get("webhook-id"), hits[1].header.Get("webhook-id"))
	}
}

// TestUsers: GET /v1/users/{userId} answers the configured users, 404
// for others.
func TestUsers(t *testing.T) {
	s := newServer(t, emulator.Options{Users: []workspace.User{{ID: "US1", Email: "agent@example.com", FirstName: "Ann"}}})
	u := data[workspace.User](t, call(t, s.URL, "GET", "/v1/users/US1", nil), http.StatusOK)
	if u.Email != "agent@example.com" || u.FirstName != "Ann" {
		t.Errorf("user = %+v", u)
	}
	errorBody(t, call(t, s.URL, "GET", "/v1/users/US9", nil), http.StatusNotFound)
}
