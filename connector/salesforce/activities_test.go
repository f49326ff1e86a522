package salesforce

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

func testCall(contact string) connector.Activity {
	return connector.Activity{Key: "call:AC1:" + contact, Kind: connector.ActivityCall, RecordID: contact, SourceID: "AC1",
		Direction: connector.DirectionIncoming, At: time.Date(2026, 3, 2, 23, 30, 0, 0, time.UTC), From: "+15551230000", To: "+15559870000",
		Status: "completed", Duration: 125 * time.Second, OwnerEmail: "Rep@Example.com"}
}

// TestActivityTasks logs a call and a text on a Contact and reads the
// Tasks back from the test org: the call fields Salesforce documents for
// a logged call, the owner found by e-mail, the text's body.
func TestActivityTasks(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, nil)
	ctx := context.Background()
	contact := org.Add("Contact", map[string]any{"LastName": "Called"})
	rep := org.AddUser("rep@example.com", "Rep", true)
	org.AddUser("texter@example.com", "Gone", false)

	call := testCall(contact)
	call.Summary, call.NextSteps = []string{"Asked for a quote"}, []string{"Send the quote"}
	callID, err := s.WriteActivity(ctx, "", call)
	if err != nil {
		t.Fatal(err)
	}
	text := connector.Activity{Key: "message:M1:" + contact, Kind: connector.ActivityMessage, RecordID: contact, SourceID: "M1",
		Direction: connector.DirectionOutgoing, At: call.At, From: "+15559870000", To: "+15551230000", Status: "delivered",
		OwnerEmail: "texter@example.com", Text: "See you at 5"}
	textID, err := s.WriteActivity(ctx, "", text)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := org.Get(callID)
	want := map[string]any{"TaskSubtype": "Call", "CallType": "Inbound", "CallDurationInSeconds": "125", "CallDisposition": "completed",
		"Status": "Completed", "WhoId": contact, "OwnerId": rep, "ActivityDate": "2026-03-02", "Subject": "Call from +15551230000",
		"CallObject": call.Key, "Description": "Summary:\n- Asked for a quote\n\nNext steps:\n- Send the quote"}
	for k, v := range want {
		if !ok || got.Fields[k] != v {
			t.Errorf("call task %s = %v, want %v", k, got.Fields[k], v)
		}
	}
	got, ok = org.Get(textID)
	want = map[string]any{"TaskSubtype": "Task", "CallType": nil, "CallDurationInSeconds": nil, "Status": "Completed", "WhoId": contact,
		"OwnerId": nil, "Subject": "Text to +15551230000", "Description": "See you at 5", "CallObject": text.Key}
	for k, v := range want {
		if !ok || got.Fields[k] != v {
			t.Errorf("text task %s = %v, want %v (an inactive user owns nothing)", k, got.Fields[k], v)
		}
	}
	for _, a := range []connector.Activity{call, text} {
		if id, err := s.FindActivity(ctx, a.Kind, a.Key, contact); err != nil || (id != callID && id != textID) {
			t.Errorf("find %s: %q, %v", a.Key, id, err)
		}
	}
	other := org.Add("Contact", map[string]any{"LastName": "Other"})
	if id, err := s.FindActivity(ctx, call.Kind, call.Key, other); err != nil || id != "" {
		t.Errorf("find on another contact: %q, %v; want none", id, err)
	}
}

// TestActivityLostAnswerFoundByKey loses the answer of a Task's create:
// the write's outcome is unknown, FindActivity finds the Task by its key,
// and the later summary replaces it: one Task, subtype kept.
func TestActivityLostAnswerFoundByKey(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, nil)
	ctx := context.Background()
	contact := org.Add("Contact", map[string]any{"LastName": "Called"})
	call := testCall(contact)
	if id, err := s.FindActivity(ctx, call.Kind, call.Key, contact); err != nil || id != "" {
		t.Fatalf("find before: %q, %v", id, err)
	}
	org.LoseAnswers(salesforceemu.RouteCreate, 1)
	if _, err := s.WriteActivity(ctx, "", call); !errors.Is(err, connector.ErrOutcomeUnknown) {
		t.Fatalf("create with a lost answer: %v, want ErrOutcomeUnknown", err)
	}
	id, err := s.FindActivity(ctx, call.Kind, call.Key, contact)
	if err != nil || id == "" {
		t.Fatalf("find after the lost answer: %q, %v", id, err)
	}
	call.Summary = []string{"Wants a demo"}
	call.RecordingURL = "https://example.com/rec/1"
	if got, err := s.WriteActivity(ctx, id, call); err != nil || got != id {
		t.Fatalf("replace: %q, %v", got, err)
	}
	tasks := org.Records("Task")
	if len(tasks) != 1 {
		t.Fatalf("%d tasks, want 1", len(tasks))
	}
	f := tasks[0].Fields
	if f["Description"] != "Summary:\n- Wants a demo\n\nRecording:\nhttps://example.com/rec/1" || f["TaskSubtype"] != "Call" {
		t.Errorf("task after the replace: %v", f)
	}
	if _, err := s.WriteActivity(ctx, salesforceemu.MakeID("00T000000000zzz"), call); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("replace of a task that does not exist: %v, want ErrNotFound", err)
	}
}

// TestActivityRefusalWithholdsText has the org refuse a text's Task, by
// a validation rule and by a whole-call refusal whose message quotes the
// value (as STRING_TOO_LONG does): each is a *connector.RefusedError and
// no error holds the text.
func TestActivityRefusalWithholdsText(t *testing.T) {
	const secret = "my card number is 4111 1111 1111 1111, call me"
	org := salesforceemu.NewServer(salesforceemu.Options{ValidationRules: []salesforceemu.ValidationRule{{Name: "NoTextsOnVIPs",
		Object: "Task", Field: "Subject", Message: "Texts are not logged on this contact",
		Refuse: func(r map[string]any) bool { s, _ := r["Subject"].(string); return strings.HasPrefix(s, "Text") }}}})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, nil)
	ctx := context.Background()
	contact := org.Add("Contact", map[string]any{"LastName": "VIP"})
	text := connector.Activity{Key: "message:M1:" + contact, Kind: connector.ActivityMessage, RecordID: contact,
		Direction: connector.DirectionIncoming, At: time.Now(), From: "+15551230000", Text: secret}
	check := func(what string, err error, reason string) {
		t.Helper()
		var re *connector.RefusedError
		if !errors.As(err, &re) || !errors.Is(err, connector.ErrRefused) {
			t.Errorf("%s: %v, want a *connector.RefusedError", what, err)
			return
		}
		if strings.Contains(err.Error(), "4111") || strings.Contains(re.Reason, "4111") {
			t.Errorf("%s: the error quotes the text: %v", what, err)
		}
		if !strings.Contains(err.Error(), reason) {
			t.Errorf("%s: %v, want it to say %q", what, err, reason)
		}
	}
	_, err := s.WriteActivity(ctx, "", text)
	check("validation rule", err, "Texts are not logged on this contact")
	org.Fail(salesforceemu.RouteCreate, 1, http.StatusBadRequest, "STRING_TOO_LONG", "Description: data value too large: "+secret+" (max length=32000)", "Description")
	_, err = s.WriteActivity(ctx, "", connector.Activity{Key: "message:M2:" + contact, Kind: connector.ActivityMessage, RecordID: contact,
		Direction: connector.DirectionOutgoing, At: time.Now(), Text: secret, Transcript: nil})
	check("a message quoting the value", err, "STRING_TOO_LONG")
	if n := len(org.Records("Task")); n != 0 {
		t.Errorf("%d tasks, want none", n)
	}
}
