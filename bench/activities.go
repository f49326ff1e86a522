package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// ActivityCRMs are the CRMs the activities scenario measures, by their
// connector type.
var ActivityCRMs = []string{"hubspot", "salesforce", "pipedrive"}

// The activities scenario's targets (issue 33).
const (
	activityP50 = time.Second
	activityP99 = 3 * time.Second
	// activityPeople are the linked people calls go to; activityPace is
	// the time between two calls.
	activityPeople = 50
	activityPace   = 250 * time.Millisecond
)

// Activities measures, for the CRM test server of type crm, the time
// from a call's completion in the workspace (the emulator's
// POST /_emulator/app/calls, which delivers call.completed) to its
// activity on the person's record in the CRM, as the test server holds
// it (read every 5 ms from this process). A running `syncd run` logs
// calls and texts of 50 linked people; calls come one every 250 ms, then
// as many again at once, timed from the first to the last logged.
func Activities(ctx context.Context, binary, dir, crm string, calls int) ([]Figure, error) {
	env, err := NewEnv(binary, dir, 2000, 100)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	sys, err := newActivityCRM(crm, activityPeople)
	if err != nil {
		return nil, err
	}
	defer sys.close()
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cc := sys.connector
	cc.Name, cc.Direction, cc.Schedule = "crm", policy.ToWorkspace, "@every 1h"
	cc.Activities = map[string]any{"log": []string{"calls", "messages", "summaries"}}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: env.URL, APIKey: APIKey, RateLimit: env.Rate, Burst: env.Burst},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks: configfile.Webhooks{Listen: listen, Path: "/webhooks/workspace",
			PublicURL: "http://" + listen + "/webhooks/workspace", AutoRegister: true},
		Log:        configfile.Log{Level: "info"},
		Connectors: []configfile.Connector{cc},
	}
	cfg := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		return nil, err
	}
	// Salesforce's and Pipedrive's read windows end at a whole second,
	// exclusive: the people were added in this one.
	time.Sleep(1100 * time.Millisecond)
	if _, err := env.RunOnce(ctx, cfg); err != nil {
		return nil, fmt.Errorf("initial sync: %w", err)
	}
	if got := len(env.Emu.Contacts()); got != activityPeople {
		return nil, fmt.Errorf("initial sync made %d contacts, want %d", got, activityPeople)
	}
	daemon, err := startChild(ctx, binary, "run", "--config", cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = daemon.terminate(30 * time.Second) }()
	if err := daemon.waitFor("sync pass finished", 2*time.Minute); err != nil {
		return nil, err
	}
	if len(env.Emu.Webhooks()) == 0 {
		return nil, errors.New("syncd registered no webhook")
	}
	if err := quiet(ctx, env, time.Second, time.Minute); err != nil { // the start-up catch-up
		return nil, err
	}

	seen := &firstSeen{at: map[string]time.Time{}}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for wctx.Err() == nil {
			now := time.Now()
			seen.add(sys.callIDs(), now)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	app := emulator.App{BaseURL: env.URL}
	started := map[string]time.Time{}
	for i := range calls {
		dir := []string{workspace.Incoming, workspace.Outgoing}[i%2]
		at := time.Now()
		id, err := app.Call(ctx, emulator.CallIn{Participants: []string{sys.phones[i%activityPeople]}, Direction: dir, Duration: 30 + i%90})
		if err != nil {
			stopWatch()
			<-watched
			return nil, err
		}
		started[id] = at
		time.Sleep(activityPace)
	}
	steadyLogged := seen.wait(calls, 30*time.Second)
	// Then a burst: as many calls again, made as fast as the app takes
	// them.
	burstStart := time.Now()
	for i := range calls {
		if _, err := app.Call(ctx, emulator.CallIn{Participants: []string{sys.phones[i%activityPeople]}, Direction: workspace.Incoming, Duration: 60}); err != nil {
			stopWatch()
			<-watched
			return nil, err
		}
	}
	burstLogged := seen.wait(2*calls, 2*time.Minute)
	burstTook := time.Since(burstStart)
	stopWatch()
	<-watched

	var lat []time.Duration
	for id, at := range started {
		if got, ok := seen.get(id); ok {
			lat = append(lat, got.Sub(at))
		}
	}
	scn := fmt.Sprintf("%d calls to %s, one every %s", calls, crm, activityPace)
	figs := []Figure{fig(scn, "calls logged on their person within 30 s", fmt.Sprintf("%d of %d", len(lat), calls), fmt.Sprint(calls), steadyLogged)}
	if len(lat) > 0 {
		slices.Sort(lat)
		p50, p99 := percentile(lat, 0.50), percentile(lat, 0.99)
		figs = append(figs,
			fig(scn, "call completed → activity on the CRM record, p50", ms(p50), "<= "+activityP50.String(), p50 <= activityP50),
			fig(scn, "call completed → activity on the CRM record, p99", ms(p99), "<= "+activityP99.String(), p99 <= activityP99),
			fig(scn, "call completed → activity on the CRM record, max", ms(lat[len(lat)-1]), "", true))
	}
	bscn := fmt.Sprintf("burst of %d calls to %s", calls, crm)
	return append(figs, fig(bscn, "first call made → every call logged (activities per second)",
		fmt.Sprintf("%.2fs (%.0f/s)", burstTook.Seconds(), float64(calls)/burstTook.Seconds()), fmt.Sprintf("%d logged within 2 min", calls), burstLogged)), nil
}

// firstSeen is when each call's activity was first seen.
type firstSeen struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (s *firstSeen) add(ids []string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if _, ok := s.at[id]; !ok {
			s.at[id] = now
		}
	}
}

func (s *firstSeen) get(id string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[id]
	return t, ok
}

func (s *firstSeen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.at)
}

// wait waits up to d for n calls to be seen, and reports whether they
// were.
func (s *firstSeen) wait(n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for s.count() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// activityCRM is a CRM test server with linked people, and the
// connector that reads it.
type activityCRM struct {
	connector configfile.Connector
	phones    []string
	// callIDs returns the workspace ids of the calls logged so far.
	callIDs func() []string
	close   func()
}

// callOfKey returns the call id in an activity key "call:<id>:<record>".
func callOfKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, "call:")
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, ":")
	return id, ok
}

func newActivityCRM(crm string, people int) (*activityCRM, error) {
	c := &activityCRM{}
	for i := range people {
		c.phones = append(c.phones, fmt.Sprintf("+1415555%04d", i))
	}
	phone := func(col string) configfile.Field {
		return configfile.Field{From: col, Transform: []string{"e164"}, Region: "US"}
	}
	switch crm {
	case "hubspot":
		hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
		for i, p := range c.phones {
			hs.Add(map[string]string{"firstname": fmt.Sprint("First", i), "lastname": "Last", "phone": p})
		}
		c.close = hs.Close
		c.connector = configfile.Connector{Type: "hubspot",
			Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL},
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("firstname"),
				"lastName": configfile.From("lastname"), "phoneNumbers.mobile": phone("phone")}}}
		c.callIDs = func() []string {
			var out []string
			for _, g := range hs.Engagements(hubspotemu.ObjectCalls) {
				if id, ok := callOfKey(g.Properties[hubspot.ActivityKeyProperty]); ok && len(g.Contacts) == 1 {
					out = append(out, id)
				}
			}
			return out
		}
	case "salesforce":
		org := salesforceemu.NewServer(salesforceemu.Options{RealClock: true})
		for i, p := range c.phones {
			org.Add("Contact", map[string]any{"FirstName": fmt.Sprint("First", i), "LastName": "Last", "Phone": p})
		}
		c.close = org.Close
		c.connector = configfile.Connector{Type: "salesforce",
			Settings: map[string]any{"loginURL": org.LoginURL, "clientId": org.ClientID(), "clientSecret": org.ClientSecret(),
				"apiVersion": "62.0", "object": "Contact", "settle": "0s"},
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("FirstName"),
				"lastName": configfile.From("LastName"), "phoneNumbers.work": phone("Phone")}}}
		c.callIDs = func() []string {
			var out []string
			for _, r := range org.Records("Task") {
				key, _ := r.Fields["CallObject"].(string)
				if who, _ := r.Fields["WhoId"].(string); who == "" {
					continue
				}
				if id, ok := callOfKey(key); ok {
					out = append(out, id)
				}
			}
			return out
		}
	case "pipedrive":
		pd := pipedriveemu.NewServer(pipedriveemu.Options{})
		for i, p := range c.phones {
			pd.Add(pipedriveemu.Person{Name: fmt.Sprint("First", i, " Last"), Phones: []pipedriveemu.Item{{Value: p, Label: "mobile", Primary: true}}})
		}
		c.close = pd.Close
		c.connector = configfile.Connector{Type: "pipedrive",
			Settings: map[string]any{"apiToken": pd.Token(), "baseURL": pd.URL, "lookback": "0s"},
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name"),
				"lastName": configfile.From("last_name"), "phoneNumbers.mobile": phone("phones.mobile")}}}
		c.callIDs = func() []string {
			var out []string
			for _, a := range pd.Activities() {
				_, after, ok := strings.Cut(a.Note, "syncd: ")
				if !ok || a.PersonID == 0 {
					continue
				}
				key, _, _ := strings.Cut(after, "<")
				if id, ok := callOfKey(key); ok {
					out = append(out, id)
				}
			}
			return out
		}
	default:
		return nil, fmt.Errorf("no activities scenario for %q (known: %s)", crm, strings.Join(ActivityCRMs, ", "))
	}
	return c, nil
}
