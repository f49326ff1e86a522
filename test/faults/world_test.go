package faults

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// world is one run: the table, the emulator, syncd running in this
// process (the daemon package `syncd run` drives: forward passes, and
// the webhook receiver, applier and catch-up of the reverse direction)
// and the model of what both sides must end up holding.
type world struct {
	t     *testing.T
	m     *model
	table *e2e.Table
	emu   *emulator.Emulator
	url   string // the emulator's
	trace *e2e.Trace
	d     *daemon.Daemon
	rev   *daemon.Running
	logs  *capture.Buffer
	ctx   context.Context
}

func newWorld(t *testing.T, seed int64, rows int) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &world{t: t, m: newModel(seed), table: e2e.NewTable(t), logs: &capture.Buffer{}, ctx: ctx}
	vals := make([]e2e.Values, rows)
	for i := range vals {
		vals[i] = w.m.newValues()
		w.m.add("table", vals[i])
	}
	w.table.InsertN(rows, func(i int) e2e.Values { return vals[i-1] })
	for _, r := range w.table.Rows() {
		for _, rec := range w.m.recs {
			if rec.email == r.Email {
				rec.rowID = r.ID
			}
		}
	}

	w.trace = &e2e.Trace{}
	w.emu = emulator.New(emulator.Options{
		Seed: seed, Rate: -1, FaultLatency: 40 * time.Millisecond,
		RetryBase: 20 * time.Millisecond, RetryMax: time.Second, MaxAttempts: 20,
		HTTPClient: &http.Client{Transport: w.trace.Transport()},
	})
	srv := httptest.NewServer(w.trace.Handler(w.emu.Handler()))
	w.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		w.emu.Close()
	})
	dir := t.TempDir()
	path := e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: w.url, Table: w.table.Name, StatePath: dir + "/syncd.db", Listen: "127.0.0.1:0",
		RateLimit: 1000, Burst: 50, LogLevel: "info", BatchSize: 10,
	})
	cfg, err := config.Load(path, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(w.logs)
	lvl, err := logrus.ParseLevel(*logLevel)
	if err != nil {
		t.Fatal(err)
	}
	log.SetLevel(lvl)
	if w.d, err = daemon.New(ctx, cfg, daemon.Options{Log: log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.d.Close() })
	if w.rev, err = w.d.StartReverse(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.rev.Stop)
	url := "http://" + w.rev.Addr + "/webhooks/workspace"
	if _, err := daemon.EnsureWebhook(ctx, w.d.Workspace(), w.d.Store().Webhooks, url, logrus.NewEntry(log)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("edits:\n  %s", strings.Join(w.m.log, "\n  "))
			path := filepath.Join(os.TempDir(), fmt.Sprintf("syncd-faults-seed%d-%s.log", seed, strings.NewReplacer("/", "_", "=", "").Replace(t.Name())))
			if err := os.WriteFile(path, []byte(w.logs.String()), 0o644); err == nil {
				t.Logf("syncd's log: %s", path)
			}
		}
	})
	return w
}

// explain returns what happened to the record: the emulator's write
// requests and deliveries naming its contact, and the row's audit.
func (w *world) explain(r *record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (made in the %s, row %d, contact %s):\n", r.email, r.origin, r.rowID, r.contactID)
	if r.contactID != "" {
		for _, l := range w.trace.Matching(r.contactID) {
			fmt.Fprintf(&b, "    %s\n", l)
		}
	}
	if r.rowID != 0 {
		for _, l := range w.table.History(r.rowID) {
			fmt.Fprintf(&b, "    row: %s\n", l)
		}
		ext := fmt.Sprint(r.rowID)
		for _, l := range w.trace.Matching("LINK ext=" + ext + " ") {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		l, ok, err := w.d.Store().Links.Get(e2e.Connector, ext)
		fmt.Fprintf(&b, "    link: %v %v fields=%v contactUpdatedAt=%s sourceUpdatedAt=%s\n", ok, err, l.Fields,
			l.ContactUpdatedAt.Format("15:04:05.000000"), l.SourceUpdatedAt.Format("15:04:05.000000"))
		cfs, _ := w.d.Store().Conflicts.List(e2e.Connector, 0)
		for _, c := range cfs {
			if c.ExternalID == ext || c.ContactID == r.contactID {
				fmt.Fprintf(&b, "    conflict: %+v\n", c)
			}
		}
		dls, _ := w.d.Store().DeadLetters.List(e2e.Connector)
		for _, d := range dls {
			if strings.Contains(fmt.Sprintf("%+v", d), r.contactID) || d.Key == ext {
				fmt.Fprintf(&b, "    dead letter: %+v\n", d)
			}
		}
	}
	return b.String()
}

// pass runs one forward pass of every connector, as the schedule would.
// Under faults it may stop early; that is logged, not a failure.
func (w *world) pass(label string) {
	sums, err := w.d.RunOnce(w.ctx)
	w.m.logf("%s: forward pass %v (error: %v)", label, sums, err)
}

// contactByEmail finds the contact holding the e-mail in the emulator.
func (w *world) contactByEmail(email string) (workspace.Contact, bool) {
	for _, c := range w.emu.Contacts() {
		if strings.EqualFold(e2e.ContactValues(c).Email, email) {
			return c, true
		}
	}
	return workspace.Contact{}, false
}

func (w *world) appCreate(v e2e.Values) workspace.Contact {
	return emutest.NewApp(w.t, w.url).Create(workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{
		FirstName: v.First, LastName: v.Last, Company: v.Company,
		Emails:       []workspace.Item{{Name: "work", Value: v.Email}},
		PhoneNumbers: []workspace.Item{{Name: "work", Value: v.Phone}},
	}})
}

func (w *world) appSet(id, column, value string) {
	p := &workspace.DefaultFieldsPatch{}
	switch column {
	case "first_name":
		p.FirstName = workspace.Some(value)
	case "last_name":
		p.LastName = workspace.Some(value)
	case "company":
		p.Company = workspace.Some(value)
	case "phone":
		p.PhoneNumbers = []workspace.ItemPatch{{Name: "work", Value: &value}}
	}
	emutest.NewApp(w.t, w.url).Patch(id, workspace.ContactPatch{DefaultFields: p})
}

// settle waits until every webhook delivery of the emulator is settled
// and the applier has drained the inbox.
func (w *world) settle(timeout time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pending := 0
		for _, wh := range w.emu.Webhooks() {
			for _, d := range w.emu.Deliveries(wh.ID) {
				if d.Status == emulator.DeliveryPending {
					pending++
				}
			}
		}
		inbox, err := w.d.Store().Inbox.Count()
		if err != nil {
			w.t.Fatal(err)
		}
		if pending == 0 && inbox == 0 && w.rev.Applier.Idle() {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("not settled after %s: %d deliveries pending, %d events in the inbox", timeout, pending, inbox)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
