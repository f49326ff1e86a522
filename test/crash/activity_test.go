package crash

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestKillWhileLoggingActivities: calls and texts between the workspace
// and linked HubSpot contacts, a tenth of the deliveries repeated,
// syncd SIGKILLed at random moments while it logs them and calls made
// while it is down: every call and text ends as exactly one activity on
// its contact, none twice (a kill between HubSpot's create and syncd's
// record of it is found by syncd's key before anything is created
// again).
func TestKillWhileLoggingActivities(t *testing.T) {
	rng := rand.New(rand.NewSource(*seed + 3300))
	const contacts, calls, texts, whileDown = 20, 100, 100, 20
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1, Seed: uint64(*seed)})
	t.Cleanup(hs.Close)
	phones := make([]string, contacts)
	ids := map[string]string{} // phone -> HubSpot contact id
	for i := range phones {
		phones[i] = fmt.Sprintf("+1555020%04d", i)
		ids[phones[i]] = hs.Add(map[string]string{"firstname": fmt.Sprintf("K%d", i), "phone": phones[i]})
	}
	emu := emulator.NewServer(emulator.Options{Rate: -1, Seed: *seed, WebhookDuplicates: 0.1,
		RetryBase: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond, MaxAttempts: 200})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := filepath.Join(dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks:  configfile.Webhooks{Listen: addr, PublicURL: "http://" + addr + "/webhooks/workspace", AutoRegister: true},
		Log:       configfile.Log{Level: "warn"},
		Connectors: []configfile.Connector{{Name: "crm", Type: "hubspot", Schedule: "@every 1h",
			Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL, "rateLimit": 100000, "searchRateLimit": 1000},
			Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{
				"firstName": configfile.From("firstname"), "phoneNumbers.mobile": configfile.From("phone")}},
			Activities: map[string]any{"log": []string{"calls", "messages", "summaries"}},
		}},
	}
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	p := start(t, "run", "--config", cfg)
	waitListening(t, context.Background(), p, addr)
	deadline := time.Now().Add(30 * time.Second)
	for len(emu.Contacts()) < contacts {
		if time.Now().After(deadline) {
			t.Fatalf("%d contacts linked after 30s, want %d\n%s", len(emu.Contacts()), contacts, p.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	app := emulator.App{BaseURL: emu.URL}
	ctx := context.Background()
	want := map[string]string{} // key -> contact id
	makeCall := func() {
		ph := phones[rng.Intn(contacts)]
		id, err := app.Call(ctx, emulator.CallIn{Participants: []string{ph}, Direction: []string{workspace.Incoming, workspace.Outgoing}[rng.Intn(2)], Duration: rng.Intn(600)})
		if err != nil {
			t.Fatal(err)
		}
		want["call:"+id+":"+ids[ph]] = ids[ph]
		if rng.Intn(4) == 0 {
			if err := app.Summarize(ctx, id, []string{"summary of " + id}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	makeText := func() {
		ph := phones[rng.Intn(contacts)]
		in := emulator.MessageIn{From: ph, To: []string{emulator.PhoneNumber}, Text: "hello", Direction: workspace.Incoming}
		if rng.Intn(2) == 0 {
			in = emulator.MessageIn{From: emulator.PhoneNumber, To: []string{ph}, Text: "hi", Direction: workspace.Outgoing}
		}
		id, err := app.Message(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want["message:"+id+":"+ids[ph]] = ids[ph]
	}
	killEvery := (calls + texts) / (*kills + 1)
	for i := range calls + texts {
		if i%2 == 0 && i/2 < calls {
			makeCall()
		} else {
			makeText()
		}
		if i > 0 && i%killEvery == 0 {
			time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
			t.Logf("kill after %d calls and texts (running: %v)", i+1, p.Kill())
			p = start(t, "run", "--config", cfg)
		}
	}
	// Calls made while syncd is down.
	t.Logf("kill before the calls made while down (running: %v)", p.Kill())
	for range whileDown {
		makeCall()
	}
	p = start(t, "run", "--config", cfg)

	wantCalls, wantTexts := 0, 0
	for k := range want {
		if k[:5] == "call:" {
			wantCalls++
		} else {
			wantTexts++
		}
	}
	deadline = time.Now().Add(90 * time.Second)
	for len(hs.Engagements(hubspotemu.ObjectCalls)) < wantCalls || len(hs.Engagements(hubspotemu.ObjectCommunications)) < wantTexts {
		if time.Now().After(deadline) {
			t.Fatalf("after 90s: %d calls (want %d), %d texts (want %d)\n%s", len(hs.Engagements(hubspotemu.ObjectCalls)), wantCalls,
				len(hs.Engagements(hubspotemu.ObjectCommunications)), wantTexts, p.Out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // duplicates still in flight would show now
	got := map[string]string{}
	for _, typ := range []string{hubspotemu.ObjectCalls, hubspotemu.ObjectCommunications} {
		for _, g := range hs.Engagements(typ) {
			k := g.Properties[hubspot.ActivityKeyProperty]
			if _, dup := got[k]; dup {
				t.Errorf("%s logged twice", k)
			}
			if len(g.Contacts) != 1 {
				t.Errorf("%s associated with %v", k, g.Contacts)
				continue
			}
			got[k] = g.Contacts[0]
		}
	}
	for k, contact := range want {
		if got[k] != contact {
			t.Errorf("%s on contact %q, want %q", k, got[k], contact)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d activities, want %d", len(got), len(want))
	}
	t.Logf("%d calls and %d texts, each logged once, through %d kills (%d searches for activities cut short by a kill)",
		wantCalls, wantTexts, *kills+1, hs.Stats().Requests[hubspotemu.RouteEngagementSearch])
}
