package crash

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// activityWorld is the workspace emulator and the four systems that log
// its calls and texts: a HubSpot, a Salesforce and a Pipedrive test
// server and a PostgreSQL table with an activities table beside it, each
// holding the same people (one phone number each), and a configuration
// of the binary syncing them all to the workspace with every kind of
// activity logged.
type activityWorld struct {
	emu    *emulator.Server
	hs     *hubspotemu.Server
	sf     *salesforceemu.Server
	pd     *pipedriveemu.Server
	table  *e2e.Table
	acts   string // the PostgreSQL activities table
	cfg    string
	listen string
	phones []string
	// The record of each phone in each system, by connector name.
	records map[string][]string
}

// The connectors of the world's configuration.
var activitySystems = []string{"hubspot", "salesforce", "pipedrive", "postgres"}

func newActivityWorld(t *testing.T, people int, dups float64) *activityWorld {
	t.Helper()
	w := &activityWorld{records: map[string][]string{}}
	w.emu = emulator.NewServer(emulator.Options{Rate: -1, Seed: *seed, WebhookDuplicates: dups,
		RetryBase: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond, MaxAttempts: 4})
	t.Cleanup(w.emu.Close)
	w.hs = hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(w.hs.Close)
	w.sf = salesforceemu.NewServer(salesforceemu.Options{RealClock: true})
	t.Cleanup(w.sf.Close)
	w.pd = pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 1000, SearchLimit: -1})
	t.Cleanup(w.pd.Close)
	w.table = e2e.NewTable(t)
	w.acts = strings.TrimSuffix(w.table.Name, ".contacts") + ".activities"
	w.table.Exec(`CREATE TABLE ` + w.acts + ` (activity_key text PRIMARY KEY, contact_id bigint NOT NULL, kind text,
		started_at timestamptz, direction text, seconds integer, summary text, transcript text, body text, call_id text)`)
	for i := range people {
		p := fmt.Sprintf("+1415%03d%04d", 700+i/10000, i%10000)
		w.phones = append(w.phones, p)
		first, last := fmt.Sprintf("First%d", i), fmt.Sprintf("Last%d", i)
		w.records["hubspot"] = append(w.records["hubspot"], w.hs.Add(map[string]string{"firstname": first, "lastname": last, "phone": p}))
		w.records["salesforce"] = append(w.records["salesforce"], w.sf.Add("Contact", map[string]any{"FirstName": first, "LastName": last, "Phone": p}))
		w.records["pipedrive"] = append(w.records["pipedrive"], w.pd.Add(pipedriveemu.Person{Name: first + " " + last,
			Phones: []pipedriveemu.Item{{Value: p, Label: "mobile", Primary: true}}}))
		w.records["postgres"] = append(w.records["postgres"], strconv.FormatInt(w.table.Insert(e2e.Values{First: first, Last: last, Phone: p}), 10))
	}
	w.listen = freeAddr(t)
	dir := t.TempDir()
	logAll := map[string]any{"log": []string{"calls", "messages", "summaries", "transcripts", "recordings"}}
	phone := func(col string) configfile.Field {
		return configfile.Field{From: col, Transform: []string{"e164"}, Region: "US"}
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: w.emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks:  configfile.Webhooks{Listen: w.listen, Path: "/webhooks/workspace", PublicURL: "http://" + w.listen + "/webhooks/workspace", AutoRegister: true},
		Log:       configfile.Log{Level: "debug"},
		Connectors: []configfile.Connector{
			{Name: "hubspot", Type: "hubspot", Direction: "to-workspace", Schedule: "@every 1h",
				Settings: map[string]any{"token": w.hs.Token(), "baseURL": w.hs.URL, "rateLimit": 100000, "searchRateLimit": 1000},
				Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("firstname"),
					"lastName": configfile.From("lastname"), "phoneNumbers.mobile": phone("phone")}},
				Activities: logAll},
			{Name: "salesforce", Type: "salesforce", Direction: "to-workspace", Schedule: "@every 1h",
				Settings: map[string]any{"loginURL": w.sf.LoginURL, "clientId": w.sf.ClientID(), "clientSecret": w.sf.ClientSecret(),
					"apiVersion": "62.0", "object": "Contact", "settle": "0s"},
				Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("FirstName"),
					"lastName": configfile.From("LastName"), "phoneNumbers.work": phone("Phone")}},
				Activities: logAll},
			{Name: "pipedrive", Type: "pipedrive", Direction: "to-workspace", Schedule: "@every 1h",
				Settings: map[string]any{"apiToken": w.pd.Token(), "baseURL": w.pd.URL, "lookback": "0s"},
				Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name"),
					"lastName": configfile.From("last_name"), "phoneNumbers.mobile": phone("phones.mobile")}},
				Activities: logAll},
			{Name: "postgres", Type: "postgres", Direction: "to-workspace", Schedule: "@every 1h",
				Settings: map[string]any{"dsn": w.table.DSN, "table": w.table.Name, "changes": "poll"},
				Mapping: configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{"firstName": configfile.From("first_name"),
					"lastName": configfile.From("last_name"), "phoneNumbers.work": phone("phone")}},
				Activities: map[string]any{"log": logAll["log"], "table": w.acts, "mapping": map[string]string{
					"key": "activity_key", "contact": "contact_id", "kind": "kind", "at": "started_at", "direction": "direction",
					"duration": "seconds", "summary": "summary", "transcript": "transcript", "text": "body", "sourceId": "call_id"}}},
		},
	}
	w.cfg = filepath.Join(dir, "syncd.yaml")
	if err := f.Write(w.cfg); err != nil {
		t.Fatal(err)
	}
	return w
}

// logged is one activity as a system holds it.
type logged struct {
	key, record string
	body        string // what the activity says: the summary, transcript, text
}

// activities returns each system's activities.
func (w *activityWorld) activities(t *testing.T) map[string][]logged {
	t.Helper()
	out := map[string][]logged{}
	for _, typ := range []string{hubspotemu.ObjectCalls, hubspotemu.ObjectCommunications} {
		for _, g := range w.hs.Engagements(typ) {
			rec := ""
			if len(g.Contacts) == 1 {
				rec = g.Contacts[0]
			} else {
				rec = fmt.Sprint(g.Contacts)
			}
			out["hubspot"] = append(out["hubspot"], logged{key: g.Properties[hubspot.ActivityKeyProperty], record: rec,
				body: g.Properties["hs_call_body"] + g.Properties["hs_communication_body"]})
		}
	}
	for _, r := range w.sf.Records("Task") {
		if r.IsDeleted {
			continue
		}
		key, _ := r.Fields["CallObject"].(string)
		who, _ := r.Fields["WhoId"].(string)
		desc, _ := r.Fields["Description"].(string)
		out["salesforce"] = append(out["salesforce"], logged{key: key, record: who, body: desc})
	}
	for _, a := range w.pd.Activities() {
		key := ""
		if _, after, ok := strings.Cut(a.Note, "syncd: "); ok {
			key, _, _ = strings.Cut(after, "<")
		}
		out["pipedrive"] = append(out["pipedrive"], logged{key: strings.ReplaceAll(key, "&#34;", `"`), record: strconv.FormatInt(a.PersonID, 10), body: a.Note})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := w.table.Pool.Query(ctx, `SELECT activity_key, contact_id, coalesce(summary, '') || coalesce(transcript, '') || coalesce(body, '') FROM `+w.acts)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var l logged
		var contact int64
		if err := rows.Scan(&l.key, &contact, &l.body); err != nil {
			t.Fatal(err)
		}
		l.record = strconv.FormatInt(contact, 10)
		out["postgres"] = append(out["postgres"], l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// counts returns how many activities each system holds.
func (w *activityWorld) counts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for sys, ls := range w.activities(t) {
		out[sys] = len(ls)
	}
	return out
}

// made is a call or text the test made, and what its activity must
// say.
type made struct {
	kind, id string
	person   int
	want     []string // words its activity must hold in every system
}

// call makes a call with person i and returns it.
func (w *activityWorld) call(t *testing.T, ctx context.Context, i, n int) made {
	t.Helper()
	dir := workspace.Incoming
	if n%2 == 1 {
		dir = workspace.Outgoing
	}
	status := ""
	if n%7 == 3 {
		status = "no-answer"
	}
	id, err := (emulator.App{BaseURL: w.emu.URL}).Call(ctx, emulator.CallIn{Participants: []string{w.phones[i]}, Direction: dir, Status: status, Duration: 10 + n%50})
	if err != nil {
		t.Fatal(err)
	}
	return made{kind: "call", id: id, person: i}
}

// text sends or receives text n with person i.
func (w *activityWorld) text(t *testing.T, ctx context.Context, i, n int) made {
	t.Helper()
	dir, from, to := workspace.Incoming, w.phones[i], []string{emulator.PhoneNumber}
	if n%2 == 1 {
		dir, from, to = workspace.Outgoing, emulator.PhoneNumber, []string{w.phones[i]}
	}
	body := fmt.Sprintf("text-%d-body", n)
	id, err := (emulator.App{BaseURL: w.emu.URL}).Message(ctx, emulator.MessageIn{From: from, To: to, Text: body, Direction: dir})
	if err != nil {
		t.Fatal(err)
	}
	return made{kind: "message", id: id, person: i, want: []string{body}}
}

// summarize gives call m its summary and, when transcript, a transcript.
func (w *activityWorld) summarize(t *testing.T, ctx context.Context, m *made, transcript bool) {
	t.Helper()
	app := emulator.App{BaseURL: w.emu.URL}
	sum := "summary-of-" + m.id
	if err := app.Summarize(ctx, m.id, []string{sum}, []string{"call back"}); err != nil {
		t.Fatal(err)
	}
	m.want = append(m.want, sum)
	if transcript {
		line := "transcript-of-" + m.id
		if err := app.Transcribe(ctx, m.id, []workspace.DialogueLine{{Content: line, Identifier: w.phones[m.person], End: 3}}); err != nil {
			t.Fatal(err)
		}
		m.want = append(m.want, line)
	}
}
