package reconcile

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	csvconn "github.com/syncd-io/syncd/connector/csv"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// env is one connector syncing a CSV file into an emulated workspace.
type env struct {
	t      *testing.T
	emu    *emulator.Server
	ws     *workspace.Client
	dir    string
	csv    string
	store  *state.Store
	rows   [][]string // header first
	policy policy.Delete
	allow  bool
	match  []string
	spec   *mapping.Spec // the mapping; testSpec() when nil
	log    *logrus.Entry // the reconciler's log; quietLog() when nil
}

const testSource = "custom-crm"

func newEnv(t *testing.T, rows int, emuOpts emulator.Options) *env {
	t.Helper()
	if emuOpts.Rate == 0 {
		emuOpts.Rate = -1 // no limit unless the test asks for one
	}
	emuOpts.APIKey = "test-key"
	emuOpts.CustomFields = []workspace.CustomFieldDefinition{{Name: "Score", Key: "score", Type: "number"}}
	emu := emulator.NewServer(emuOpts)
	t.Cleanup(emu.Close)
	ws, err := workspace.NewClient(workspace.ClientOptions{
		BaseURL: emu.URL, APIKey: "test-key", RateLimit: 1000, Burst: 100,
		Limiter: nil, MaxRetries: 8,
		Log:               quietLog(),
		CustomFieldValues: emulator.TestCustomFieldValues(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.LoadCustomFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, emu: emu, ws: ws, dir: t.TempDir(), policy: policy.DeleteIgnore}
	e.csv = filepath.Join(e.dir, "contacts.csv")
	e.rows = [][]string{{"id", "first_name", "last_name", "email", "mobile", "score"}}
	for i := 1; i <= rows; i++ {
		e.rows = append(e.rows, row(i, "v1"))
	}
	e.writeCSV()
	e.openStore()
	return e
}

func row(i int, version string) []string {
	return []string{
		fmt.Sprint(i), fmt.Sprintf("First%d", i), fmt.Sprintf("Last%d-%s", i, version),
		fmt.Sprintf("person%d@example.com", i), fmt.Sprintf("+1 (415) 555-%04d", i), fmt.Sprint(i % 7),
	}
}

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetLevel(logrus.ErrorLevel)
	return logrus.NewEntry(l)
}

func (e *env) writeCSV() {
	e.t.Helper()
	f, err := os.Create(e.csv)
	if err != nil {
		e.t.Fatal(err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(e.rows); err != nil {
		e.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) openStore() {
	e.t.Helper()
	s, err := state.Open(filepath.Join(e.dir, "syncd.db"), state.Options{NoSync: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = s
	e.t.Cleanup(func() { s.Close() })
}

// loseState deletes the state file, as an operator might.
func (e *env) loseState() {
	e.t.Helper()
	if err := e.store.Close(); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.dir, "syncd.db")); err != nil {
		e.t.Fatal(err)
	}
	e.openStore()
}

func (e *env) reconciler() *Reconciler {
	e.t.Helper()
	typ, _ := connector.Lookup(csvconn.TypeName)
	settings := csvconn.NewSettings()
	settings.Path = e.csv
	settings.BatchSize = 100
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: settings, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { src.Close() })
	spec := testSpec()
	if e.spec != nil {
		spec = *e.spec
	}
	m, err := mapping.Compile(spec, "to-workspace", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	m.SetCustomFieldTypes(e.ws)
	r, err := New(Options{
		Connector: "crm", Source: testSource, Type: typ, Reader: src, Mapper: m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, OnSourceDelete: e.policy,
		AllowMassDelete: e.allow, Match: e.match, Backoff: time.Millisecond, MaxAttempts: 6, Log: e.logOr(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) logOr() *logrus.Entry {
	if e.log != nil {
		return e.log
	}
	return quietLog()
}

func (e *env) run() Summary {
	e.t.Helper()
	sum, err := e.reconciler().Run(context.Background())
	if err != nil {
		e.t.Fatalf("run: %v (summary %v)", err, sum)
	}
	return sum
}

// writes returns the write calls the emulator received since before.
func (e *env) writes(before emulator.Stats) (posts, patches, deletes int) {
	now := e.emu.Stats()
	d := func(k string) int { return now.Requests[k] - before.Requests[k] }
	return d("POST /v1/contacts"), d("PATCH /v1/contacts/{id}"), d("DELETE /v1/contacts/{id}")
}

// assertConverged checks one contact per live row, every field equal.
func (e *env) assertConverged() {
	e.t.Helper()
	byExt := map[string][]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		if c.Source == nil || *c.Source != testSource || c.ExternalID == nil {
			continue
		}
		byExt[*c.ExternalID] = append(byExt[*c.ExternalID], c)
	}
	if len(byExt) != len(e.rows)-1 {
		e.t.Errorf("workspace holds %d externalIds, source has %d rows", len(byExt), len(e.rows)-1)
	}
	for _, r := range e.rows[1:] {
		cs := byExt[r[0]]
		if len(cs) != 1 {
			e.t.Errorf("row %s: %d contacts, want exactly 1", r[0], len(cs))
			continue
		}
		c := cs[0]
		if got := deref(c.DefaultFields.LastName); got != r[2] {
			e.t.Errorf("row %s: lastName %q, want %q", r[0], got, r[2])
		}
		if len(c.DefaultFields.Emails) != 1 || c.DefaultFields.Emails[0].Value != r[3] {
			e.t.Errorf("row %s: emails %+v, want one %q", r[0], c.DefaultFields.Emails, r[3])
		}
		if len(c.DefaultFields.PhoneNumbers) != 1 || c.DefaultFields.PhoneNumbers[0].Value == "" {
			e.t.Errorf("row %s: phones %+v, want one", r[0], c.DefaultFields.PhoneNumbers)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func testSpec() mapping.Spec {
	return mapping.Spec{
		ExternalID: "id",
		SourceURL:  "https://crm.example.com/contacts/{{ .id }}",
		Fields: map[string]mapping.FieldSpec{
			"firstName":           {From: "first_name"},
			"lastName":            {From: "last_name"},
			"emails.work":         {From: "email"},
			"phoneNumbers.mobile": {From: "mobile", Transform: []string{"e164"}, Region: "US"},
			"custom.score":        {From: "score"},
		},
	}
}
