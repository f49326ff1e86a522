package pipedrive

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

func pdCall(person string) connector.Activity {
	return connector.Activity{Key: "call:AC1:" + person, Kind: connector.ActivityCall, RecordID: person, SourceID: "AC1",
		Direction: connector.DirectionOutgoing, At: time.Date(2026, 3, 2, 23, 30, 10, 0, time.UTC), From: "+15559870000", To: "+15551230000",
		Status: "completed", Duration: 125 * time.Second, OwnerEmail: "Rep@Example.com"}
}

// TestActivityOnPerson logs a call and two texts on a person and reads
// them back from the test server: type call, done, due date and time in
// UTC, the duration as HH:MM, the owner found by e-mail, the note in HTML
// with syncd's key; texts of the "Text message" type the connector adds
// once.
func TestActivityOnPerson(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	src := openWith(t, srv, func(*Settings) {})
	ctx := context.Background()
	person := srv.Add(pipedriveemu.Person{Name: "Ada"})
	rep := srv.AddUser("Rep", "rep@example.com", true)
	srv.AddUser("Old", "old@example.com", false)

	call := pdCall(person)
	call.Summary = []string{"Wants <b>two</b> seats"}
	callID, err := src.WriteActivity(ctx, "", call)
	if err != nil {
		t.Fatal(err)
	}
	var textIDs []string
	for i, owner := range []string{"old@example.com", ""} {
		text := connector.Activity{Key: "message:M" + strconv.Itoa(i) + ":" + person, Kind: connector.ActivityMessage, RecordID: person,
			Direction: connector.DirectionIncoming, At: call.At, From: "+15551230000", OwnerEmail: owner, Text: "See you & bye"}
		id, err := src.WriteActivity(ctx, "", text)
		if err != nil {
			t.Fatal(err)
		}
		textIDs = append(textIDs, id)
	}
	acts := map[string]pipedriveemu.Activity{}
	for _, a := range srv.Activities() {
		acts[strconv.FormatInt(a.ID, 10)] = a
	}
	c := acts[callID]
	if c.Type != "call" || strconv.FormatInt(c.PersonID, 10) != person || !c.Done || c.DueDate != "2026-03-02" || c.DueTime != "23:30" ||
		c.Duration != "00:03" || c.OwnerID != rep || c.Subject != "Call to +15551230000" ||
		c.Note != "<p><b>Summary</b></p><ul><li>Wants &lt;b&gt;two&lt;/b&gt; seats</li></ul><p>syncd: call:AC1:"+person+"</p>" {
		t.Errorf("call activity %+v", c)
	}
	var custom []pipedriveemu.ActivityType
	for _, ty := range srv.ActivityTypes() {
		if ty.IsCustom {
			custom = append(custom, ty)
		}
	}
	if len(custom) != 1 || custom[0].Name != "Text message" || custom[0].IconKey != "bubble" {
		t.Fatalf("custom activity types %+v, want one Text message with the bubble icon", custom)
	}
	for _, id := range textIDs {
		x := acts[id]
		if x.Type != custom[0].KeyString || x.Duration != "" || x.OwnerID != 1 || !strings.HasPrefix(x.Note, "<p>See you &amp; bye</p>") {
			t.Errorf("text activity %+v: want the custom type, no duration, the token's user (1) as owner", x)
		}
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteAddActivityType]; n != 1 {
		t.Errorf("%d activity types added, want 1", n)
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteFindUsers]; n != 2 {
		t.Errorf("%d user lookups, want 2 (one per e-mail)", n)
	}
}

// TestActivityLostAnswerFoundByKey loses the answer of an activity's
// add among other activities of the person: the outcome is unknown,
// FindActivity finds it by the key in its note, the later summary
// replaces it, and the person has one activity of the call.
func TestActivityLostAnswerFoundByKey(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	src := openWith(t, srv, func(set *Settings) { set.RateLimit = 2000 })
	ctx := context.Background()
	person := srv.Add(pipedriveemu.Person{Name: "Ada"})
	for i := range 150 { // two pages of other calls
		other := pdCall(person)
		other.Key = "call:X" + strconv.Itoa(i) + ":" + person
		if _, err := src.WriteActivity(ctx, "", other); err != nil {
			t.Fatal(err)
		}
	}
	call := pdCall(person)
	if id, err := src.FindActivity(ctx, call.Kind, call.Key, person); err != nil || id != "" {
		t.Fatalf("find before: %q, %v", id, err)
	}
	srv.Inject(pipedriveemu.RouteAddActivity, pipedriveemu.Fault{Status: http.StatusBadGateway, AfterApply: true})
	if _, err := src.WriteActivity(ctx, "", call); !errors.Is(err, connector.ErrOutcomeUnknown) {
		t.Fatalf("add with a lost answer: %v, want ErrOutcomeUnknown", err)
	}
	id, err := src.FindActivity(ctx, call.Kind, call.Key, person)
	if err != nil || id == "" {
		t.Fatalf("find after the lost answer: %q, %v", id, err)
	}
	call.Summary = []string{"Signed"}
	if got, err := src.WriteActivity(ctx, id, call); err != nil || got != id {
		t.Fatalf("replace: %q, %v", got, err)
	}
	n := 0
	for _, a := range srv.Activities() {
		if strings.Contains(a.Note, "syncd: "+call.Key+"<") {
			n++
			if !strings.Contains(a.Note, "Signed") {
				t.Errorf("the call's activity was not replaced: %q", a.Note)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d activities of the call, want 1", n)
	}
	if _, err := src.WriteActivity(ctx, "999999", call); !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("replace of an activity that does not exist: %v, want ErrNotFound", err)
	}
}

// TestActivityRefusals: a refused activity is a *connector.RefusedError
// whose text holds none of the message; a company that refuses the new
// activity type logs texts as tasks.
func TestActivityRefusals(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.RefuseActivityTypes()
	src := openWith(t, srv, func(*Settings) {})
	ctx := context.Background()
	person := srv.Add(pipedriveemu.Person{Name: "Ada"})
	text := connector.Activity{Key: "message:M1:" + person, Kind: connector.ActivityMessage, RecordID: person,
		Direction: connector.DirectionIncoming, At: time.Now(), From: "+15551230000", Text: "the door code is 4711"}
	srv.Inject(pipedriveemu.RouteAddActivity, pipedriveemu.Fault{Status: http.StatusBadRequest})
	_, err := src.WriteActivity(ctx, "", text)
	var re *connector.RefusedError
	if !errors.As(err, &re) || strings.Contains(err.Error(), "4711") {
		t.Errorf("refused add: %v, want a RefusedError without the text", err)
	}
	id, err := src.WriteActivity(ctx, "", text)
	if err != nil {
		t.Fatal(err)
	}
	acts := srv.Activities()
	if len(acts) != 1 || strconv.FormatInt(acts[0].ID, 10) != id || acts[0].Type != "task" {
		t.Errorf("activities %+v, want the text as a task", acts)
	}
}
