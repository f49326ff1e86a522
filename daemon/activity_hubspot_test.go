package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// activityEnv is a workspace emulator delivering some events twice, a
// HubSpot test server with linked contacts, and a daemon logging calls
// and texts on them, which can be stopped and started again on the same
// state and listener.
type activityEnv struct {
	emu    *emulator.Server
	hs     *hubspotemu.Server
	app    emulator.App
	cfg    *config.Config
	phones []string
	ids    []string // HubSpot contact ids, by phone
	owner  string   // the HubSpot owner of the workspace user US1
	stop   func()
	d      *daemon.Daemon
	r      *daemon.Running
}

func startActivityEnv(t *testing.T, n int, dups float64) *activityEnv {
	t.Helper()
	return startActivityEnvWith(t, n, emulator.Options{Rate: -1, WebhookDuplicates: dups, RetryBase: 50 * time.Millisecond, RetryMax: time.Second, MaxAttempts: 30,
		Users: []workspace.User{{ID: "US1", Email: "Agent@Example.com"}, {ID: "US2", Email: "nobody-in-hubspot@example.com"}}}, nil)
}

func startActivityEnvWith(t *testing.T, n int, opts emulator.Options, edit func(*configfile.Connector)) *activityEnv {
	t.Helper()
	emu := emulator.NewServer(opts)
	t.Cleanup(emu.Close)
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(hs.Close)
	e := &activityEnv{emu: emu, hs: hs, app: emulator.App{BaseURL: emu.URL}}
	e.owner = hs.AddOwner("agent@example.com")
	for i := range n {
		p := fmt.Sprintf("+1555010%04d", i)
		e.phones = append(e.phones, p)
		e.ids = append(e.ids, hs.Add(map[string]string{"firstname": fmt.Sprintf("P%d", i), "lastname": "L", "phone": p}))
	}
	listen := freeAddr(t)
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks:  configfile.Webhooks{Listen: listen, PublicURL: "http://" + listen + "/webhooks/workspace", AutoRegister: true},
		Connectors: []configfile.Connector{{Name: "crm", Type: "hubspot", Schedule: "@every 1h",
			Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL, "rateLimit": 100000, "searchRateLimit": 1000},
			Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{
				"firstName": configfile.From("firstname"), "lastName": configfile.From("lastname"), "phoneNumbers.mobile": configfile.From("phone")}},
			Activities: map[string]any{"log": []string{"calls", "messages", "summaries", "transcripts", "recordings"}},
		}},
	}
	if edit != nil {
		edit(&f.Connectors[0])
	}
	path := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.start(t)
	waitUntil(t, 20*time.Second, "the contacts to be linked", func() bool { return len(emu.Contacts()) == n })
	return e
}

// start runs a daemon on the environment's configuration.
func (e *activityEnv) start(t *testing.T) {
	t.Helper()
	d, err := daemon.New(context.Background(), e.cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := d.Start(ctx, daemon.ReversePart|daemon.ForwardPart)
	if err != nil {
		_ = d.Close()
		t.Fatal(err)
	}
	stopped := false
	e.d, e.r = d, r
	e.stop = func() {
		if !stopped {
			stopped = true
			cancel()
			_ = r.Wait()
			_ = d.Close()
		}
	}
	t.Cleanup(e.stop)
}

// byKey returns the engagements of objectType by syncd's key, failing
// on a key logged twice.
func (e *activityEnv) byKey(t *testing.T, objectType string) map[string]hubspotemu.Engagement {
	t.Helper()
	out := map[string]hubspotemu.Engagement{}
	for _, g := range e.hs.Engagements(objectType) {
		k := g.Properties[hubspot.ActivityKeyProperty]
		if _, dup := out[k]; dup {
			t.Fatalf("%s %q logged twice", objectType, k)
		}
		out[k] = g
	}
	return out
}

// Calls and texts between the workspace and linked contacts end as
// exactly one activity each on the right HubSpot contact, through
// duplicated deliveries and a restart with calls made while syncd was
// down; a summary, transcript and recording update their call's
// activity rather than add one.
func TestHubSpotActivitiesEndToEnd(t *testing.T) {
	const n = 8
	e := startActivityEnv(t, n, 0.3)
	ctx := context.Background()
	calls := map[string]int{} // call id -> contact index
	for i := range n {
		dir := workspace.Incoming
		if i%2 == 1 {
			dir = workspace.Outgoing
		}
		id, err := e.app.Call(ctx, emulator.CallIn{Participants: []string{e.phones[i]}, Direction: dir, Duration: 30 + i, UserID: []string{"US1", "US2", ""}[i%3]})
		if err != nil {
			t.Fatal(err)
		}
		calls[id] = i
		from, to := e.phones[i], []string{emulator.PhoneNumber}
		if dir == workspace.Outgoing {
			from, to = emulator.PhoneNumber, []string{e.phones[i]}
		}
		if _, err := e.app.Message(ctx, emulator.MessageIn{From: from, To: to, Text: fmt.Sprintf("text %d", i), Direction: dir}); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 20*time.Second, "a call and a text on each contact", func() bool {
		return len(e.hs.Engagements(hubspotemu.ObjectCalls)) == n && len(e.hs.Engagements(hubspotemu.ObjectCommunications)) == n
	})

	// Stopped: calls made meanwhile, and the first call's summary,
	// transcript and recording, arrive through the service's retries.
	e.stop()
	var first string
	for id, i := range calls {
		if i == 0 {
			first = id
		}
	}
	for i := range 3 {
		id, err := e.app.Call(ctx, emulator.CallIn{Participants: []string{e.phones[i]}, Direction: workspace.Incoming, Duration: 5, Status: "no-answer"})
		if err != nil {
			t.Fatal(err)
		}
		calls[id] = i
	}
	if err := e.app.Summarize(ctx, first, []string{"Asked for a quote"}, []string{"Send the quote"}); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Transcribe(ctx, first, []workspace.DialogueLine{{Content: "Hello, a quote please", Identifier: e.phones[0], End: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := e.app.Record(ctx, first, ""); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	key := "call:" + first + ":" + e.ids[0]
	waitUntil(t, 30*time.Second, "every call logged, the first one complete", func() bool {
		got := e.hs.Engagements(hubspotemu.ObjectCalls)
		if len(got) != n+3 {
			return false
		}
		for _, g := range got {
			if g.Properties[hubspot.ActivityKeyProperty] == key {
				return strings.Contains(g.Properties["hs_call_body"], "Asked for a quote") &&
					strings.Contains(g.Properties["hs_call_body"], "a quote please") && g.Properties["hs_call_recording_url"] != ""
			}
		}
		return false
	})
	// Let the duplicates still in flight arrive, then check.
	time.Sleep(300 * time.Millisecond)
	got := e.byKey(t, hubspotemu.ObjectCalls)
	if len(got) != n+3 {
		t.Fatalf("%d calls logged, want %d", len(got), n+3)
	}
	for id, i := range calls {
		g, ok := got["call:"+id+":"+e.ids[i]]
		if !ok {
			t.Errorf("call %s not logged on contact %s", id, e.ids[i])
			continue
		}
		if len(g.Contacts) != 1 || g.Contacts[0] != e.ids[i] {
			t.Errorf("call %s associated with %v, want %s", id, g.Contacts, e.ids[i])
		}
		wantOwner := ""
		if i%3 == 0 && g.Properties["hs_call_status"] == "COMPLETED" {
			wantOwner = e.owner // US1's e-mail is a HubSpot owner's; US2's and no user are none
		}
		if g.Properties["hubspot_owner_id"] != wantOwner {
			t.Errorf("call %s of contact %d has owner %q, want %q", id, i, g.Properties["hubspot_owner_id"], wantOwner)
		}
	}
	texts := e.byKey(t, hubspotemu.ObjectCommunications)
	if len(texts) != n {
		t.Fatalf("%d texts logged, want %d", len(texts), n)
	}
	for _, g := range texts {
		if g.Properties["hs_communication_channel_type"] != "SMS" || len(g.Contacts) != 1 {
			t.Errorf("text %+v", g)
		}
	}
	c, err := e.d.Store().Activities.Counts("crm")
	if err != nil {
		t.Fatal(err)
	}
	if c.Logged != int64(2*n+3) || c.Updated < 1 || c.Failed != 0 {
		t.Errorf("counts = %+v, want %d logged, the first call updated", c, 2*n+3)
	}
	if rs := e.r.Receiver.Stats(); rs.Duplicates == 0 {
		t.Errorf("no delivery came twice after the restart (receiver stats %+v): the test does not test redeliveries", rs)
	}
	checkActivityOps(t, e, int64(2*n+3))
}

// checkActivityOps checks that /status and the metrics show the
// activities logged, failed and waiting.
func checkActivityOps(t *testing.T, e *activityEnv, logged int64) {
	t.Helper()
	waitUntil(t, 10*time.Second, "the activity queue to empty", func() bool {
		n, err := e.d.Store().Activities.CountPending()
		return err == nil && n == 0
	})
	st, err := e.d.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := st.Connectors[0].Activities
	if a == nil || a.Logged != logged || a.Failed != 0 || st.ActivitiesPending != 0 {
		t.Errorf("status activities = %+v, want %d logged, none failed or waiting", a, logged)
	}
	rec := httptest.NewRecorder()
	e.d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		fmt.Sprintf(`syncd_activities{connector="crm",result="logged"} %d`, logged),
		`syncd_activities{connector="crm",result="failed"} 0`,
		`syncd_activities_pending 0`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// A call created in HubSpot whose answer is lost (syncd cannot know it
// was created, as after a crash between the write and its record) is
// looked for by syncd's key before anything is written again: one call
// on the contact, found by search, not two.
func TestHubSpotActivityLostAnswerLoggedOnce(t *testing.T) {
	e := startActivityEnv(t, 1, 0)
	e.hs.Inject(hubspotemu.RouteEngagementCreate, hubspotemu.Fault{Status: 502, AfterApply: true})
	id, err := e.app.Call(context.Background(), emulator.CallIn{Participants: []string{e.phones[0]}, Direction: workspace.Incoming, Duration: 12})
	if err != nil {
		t.Fatal(err)
	}
	key := "call:" + id + ":" + e.ids[0]
	waitUntil(t, 20*time.Second, "the call's record after the lost answer", func() bool {
		w, ok, err := e.d.Store().Activities.Written("crm", key)
		return err == nil && ok && w.ActivityID != ""
	})
	if got := e.byKey(t, hubspotemu.ObjectCalls); len(got) != 1 {
		t.Fatalf("%d calls logged, want 1", len(got))
	}
	if n := e.hs.Stats().Requests[hubspotemu.RouteEngagementSearch]; n != 1 {
		t.Errorf("%d searches, want 1 (only after the lost answer)", n)
	}
}

// Calls and texts whose deliveries the workspace gave up on while syncd
// was stopped are logged after it starts again: those still in the
// delivery history are delivered again on syncd's request, and those
// gone from it (the history keeps two) are found in the listings of the
// numbers with recent activity.
func TestHubSpotActivitiesCaughtUp(t *testing.T) {
	e := startActivityEnvWith(t, 3, emulator.Options{Rate: -1, MaxAttempts: 1, HistoryLimit: 2}, nil)
	ctx := context.Background()
	call := func(i int) string {
		id, err := e.app.Call(ctx, emulator.CallIn{Participants: []string{e.phones[i]}, Direction: workspace.Incoming, Duration: 9})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	call(0)
	call(1)
	waitUntil(t, 20*time.Second, "the first calls", func() bool { return len(e.hs.Engagements(hubspotemu.ObjectCalls)) == 2 })
	e.stop()
	missed := []string{call(0), call(0), call(1)}
	if err := e.app.Summarize(ctx, missed[0], []string{"Called while syncd was down"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Message(ctx, emulator.MessageIn{From: e.phones[1], To: []string{emulator.PhoneNumber}, Text: "are you there?", Direction: workspace.Incoming}); err != nil {
		t.Fatal(err)
	}
	fresh := call(2) // a number with no activity before: only the history has it
	waitUntil(t, 10*time.Second, "the deliveries to fail", func() bool {
		for _, wh := range e.emu.Webhooks() {
			failed := 0
			for _, d := range e.emu.Deliveries(wh.ID) {
				if d.Status == emulator.DeliveryFailed {
					failed++
				}
			}
			if failed == 2 {
				return true
			}
		}
		return false
	})
	e.start(t)
	waitUntil(t, 30*time.Second, "the missed calls and text", func() bool {
		return len(e.hs.Engagements(hubspotemu.ObjectCalls)) == 6 && len(e.hs.Engagements(hubspotemu.ObjectCommunications)) == 1
	})
	got := e.byKey(t, hubspotemu.ObjectCalls)
	for i, id := range append(missed, fresh) {
		idx := []int{0, 0, 1, 2}[i]
		if _, ok := got["call:"+id+":"+e.ids[idx]]; !ok {
			t.Errorf("call %s on contact %d not logged", id, idx)
		}
	}
	waitUntil(t, 10*time.Second, "the missed summary", func() bool {
		return strings.Contains(e.byKey(t, hubspotemu.ObjectCalls)["call:"+missed[0]+":"+e.ids[0]].Properties["hs_call_body"], "while syncd was down")
	})
}

// unknownNumbers: create: calls from a number no contact has make one
// HubSpot contact with the number (two calls, one contact), which the
// forward pass links to a new workspace contact, and each call is logged
// on it once.
func TestHubSpotActivityUnknownNumberCreates(t *testing.T) {
	e := startActivityEnvWith(t, 1, emulator.Options{Rate: -1}, func(c *configfile.Connector) {
		c.Direction = policy.Both
		c.Activities["unknownNumbers"] = "create"
	})
	const stranger = "+15550309999"
	var calls []string
	for range 2 {
		id, err := e.app.Call(context.Background(), emulator.CallIn{Participants: []string{stranger}, Direction: workspace.Incoming, Duration: 7})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, id)
	}
	waitUntil(t, 30*time.Second, "both calls logged", func() bool { return len(e.hs.Engagements(hubspotemu.ObjectCalls)) == 2 })
	var made []hubspotemu.Contact
	for _, c := range e.hs.Contacts() {
		if c.Properties["phone"] == stranger {
			made = append(made, c)
		}
	}
	if len(made) != 1 {
		t.Fatalf("%d HubSpot contacts with the number, want 1", len(made))
	}
	got := e.byKey(t, hubspotemu.ObjectCalls)
	for _, id := range calls {
		g, ok := got["call:"+id+":"+made[0].ID]
		if !ok || len(g.Contacts) != 1 || g.Contacts[0] != made[0].ID {
			t.Errorf("call %s not logged on the new contact %s: %+v", id, made[0].ID, got)
		}
	}
	linked := 0
	for _, c := range e.emu.Contacts() {
		for _, p := range c.DefaultFields.PhoneNumbers {
			if p.Value == stranger {
				linked++
			}
		}
	}
	if linked != 1 {
		t.Errorf("%d workspace contacts with the number, want 1", linked)
	}
}

// A text HubSpot refuses is a dead letter of operation activity with the
// system's reason and not the text, counted as failed; the event leaves
// the queue; retried by hand it is written again (refused again, the
// letter stays).
func TestHubSpotActivityRefusedIsDeadLetter(t *testing.T) {
	e := startActivityEnv(t, 1, 0)
	e.hs.Inject(hubspotemu.RouteEngagementCreate, hubspotemu.Fault{Status: 400})
	if _, err := e.app.Message(context.Background(), emulator.MessageIn{From: e.phones[0], To: []string{emulator.PhoneNumber},
		Text: "my pin is 4321", Direction: workspace.Incoming}); err != nil {
		t.Fatal(err)
	}
	var letters []state.DeadLetter
	waitUntil(t, 20*time.Second, "the dead letter", func() bool {
		letters, _ = e.d.Store().DeadLetters.List("crm")
		return len(letters) == 1
	})
	dl := letters[0]
	if dl.Operation != activity.OperationActivity || !strings.HasPrefix(dl.Key, "message:") || dl.Reason == "" || strings.Contains(dl.Reason, "4321") {
		t.Errorf("dead letter = %+v", dl)
	}
	waitUntil(t, 10*time.Second, "the queue to empty", func() bool {
		n, err := e.d.Store().Activities.CountPending()
		return err == nil && n == 0
	})
	if c, _ := e.d.Store().Activities.Counts("crm"); c.Failed != 1 || c.Logged != 0 {
		t.Errorf("counts = %+v, want 1 failed", c)
	}
	if n := len(e.hs.Engagements(hubspotemu.ObjectCommunications)); n != 0 {
		t.Errorf("%d texts logged", n)
	}

	// Retried by hand while HubSpot still refuses: the letter stays, its
	// attempts counted.
	e.hs.Inject(hubspotemu.RouteEngagementCreate, hubspotemu.Fault{Status: 400})
	res, err := e.d.RetryDeadLetter(context.Background(), dl.ID)
	if err != nil || res.Resolved {
		t.Fatalf("retry while refused = %+v, %v; want not resolved", res, err)
	}
	letters, _ = e.d.Store().DeadLetters.List("crm")
	if len(letters) != 1 || letters[0].ID != dl.ID || letters[0].Attempts <= dl.Attempts {
		t.Fatalf("letters after a refused retry = %+v, want letter %d with one more attempt", letters, dl.ID)
	}
	// Retried once HubSpot takes it: the text is logged once, the letter gone.
	res, err = e.d.RetryDeadLetter(context.Background(), letters[0].ID)
	if err != nil || !res.Resolved {
		t.Fatalf("retry = %+v, %v; want resolved", res, err)
	}
	if n := len(e.hs.Engagements(hubspotemu.ObjectCommunications)); n != 1 {
		t.Errorf("%d texts logged after the retry, want 1", n)
	}
	if letters, _ = e.d.Store().DeadLetters.List("crm"); len(letters) != 0 {
		t.Errorf("letters after the retry = %+v, want none", letters)
	}
	if _, err := e.d.RetryDeadLetter(context.Background(), dl.ID); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("retry of a retried letter = %v, want not found", err)
	}
}

// run --once logs what the activity queue holds and what catch-up
// finds: a call made while no daemon ran, of a number with activity.
func TestHubSpotActivitiesOnce(t *testing.T) {
	e := startActivityEnvWith(t, 1, emulator.Options{Rate: -1, MaxAttempts: 1}, nil)
	ctx := context.Background()
	if _, err := e.app.Call(ctx, emulator.CallIn{Participants: []string{e.phones[0]}, Direction: workspace.Incoming, Duration: 3}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the first call", func() bool { return len(e.hs.Engagements(hubspotemu.ObjectCalls)) == 1 })
	// Logged in HubSpot is not yet recorded as logged in syncd's state:
	// stopped in between, run --once logs it again (HubSpot keeps one),
	// and counts it among those written.
	waitUntil(t, 20*time.Second, "the first call recorded", func() bool {
		c, err := e.d.Store().Activities.Counts("crm")
		return err == nil && c.Logged == 1
	})
	e.stop()
	if _, err := e.app.Call(ctx, emulator.CallIn{Participants: []string{e.phones[0]}, Direction: workspace.Outgoing, Duration: 4}); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(ctx, e.cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.RunActivitiesOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.hs.Engagements(hubspotemu.ObjectCalls)); n != 2 || st.Written != 1 {
		t.Errorf("after run --once: %d calls logged (want 2), %d written (want 1)", n, st.Written)
	}
}
