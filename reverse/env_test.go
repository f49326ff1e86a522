package reverse

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/webhook"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

const testSource = "custom-mem"

// memConn is an in-memory system of records: a forward source, a Writer
// and a Getter, that counts its calls.
type memConn struct {
	mu      sync.Mutex
	recs    map[string]*connector.Record
	nextID  int
	clock   time.Time
	calls   int                // Write calls
	changes []connector.Change // every change written
	gets    int
	// failCall fails the next Write calls as a whole; failIDs fails the
	// changes of those record ids.
	failCall int
	failIDs  map[string]error
	// beforeWrite, when set, runs at the start of each Write call (a
	// person editing a record between the read and the write).
	beforeWrite func()
	// fieldsAt are the FieldsAt Changes hands over, by record id (a
	// change stream's versions).
	fieldsAt map[string]map[string]time.Time
	// stages: creates tell their ids to the context's StageFunc before
	// they are applied (connector.Type.StagesCreates); loseCommit
	// Write calls after it end as a commit whose answer was lost and
	// that did not go through: nothing applied, the ids used up.
	stages     bool
	loseCommit int
}

func newMem() *memConn {
	return &memConn{recs: map[string]*connector.Record{}, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), failIDs: map[string]error{}}
}

func (m *memConn) tick() time.Time {
	m.clock = m.clock.Add(time.Millisecond)
	return m.clock
}

// put creates or changes a record as a person using the system would.
func (m *memConn) put(id string, fields map[string]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.recs[id]
	if r == nil {
		r = &connector.Record{ID: id, Fields: map[string]any{}}
		m.recs[id] = r
	}
	for k, v := range fields {
		r.Fields[k] = v
	}
	r.UpdatedAt = m.tick()
}

// setUpdatedAt moves a record's change time (conflict tests).
func (m *memConn) setUpdatedAt(id string, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[id].UpdatedAt = at
}

func (m *memConn) get(id string) connector.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.recs[id]
	if r == nil {
		return connector.Record{}
	}
	return clone(*r)
}

// all returns every record.
func (m *memConn) all() []connector.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]connector.Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, clone(*r))
	}
	return out
}

func clone(r connector.Record) connector.Record {
	f := make(map[string]any, len(r.Fields))
	for k, v := range r.Fields {
		f[k] = v
	}
	r.Fields = f
	return r
}

func (m *memConn) writes() (calls int, changes []connector.Change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls, append([]connector.Change(nil), m.changes...)
}

func (m *memConn) Changes(_ context.Context, checkpoint string, fn connector.BatchFunc) error {
	m.mu.Lock()
	after, _ := strconv.ParseInt(checkpoint, 10, 64)
	var recs []connector.Record
	for _, r := range m.recs {
		if r.UpdatedAt.UnixNano() > after {
			c := clone(*r)
			c.FieldsAt = m.fieldsAt[r.ID]
			recs = append(recs, c)
		}
	}
	m.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].UpdatedAt.Before(recs[j].UpdatedAt) })
	return fn(context.Background(), connector.Batch{Records: recs, Checkpoint: strconv.FormatInt(recs[len(recs)-1].UpdatedAt.UnixNano(), 10)})
}

func (m *memConn) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return m.Changes(ctx, "", fn)
}

func (m *memConn) Close() error { return nil }

func (m *memConn) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	if m.beforeWrite != nil {
		m.beforeWrite()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.failCall > 0 {
		m.failCall--
		return nil, errors.New("connection refused")
	}
	out := make([]connector.WriteResult, len(changes))
	if stage := connector.StageOf(ctx); m.stages && stage != nil {
		ids := map[int]string{}
		for i, ch := range changes {
			if ch.Op == connector.OpCreate {
				ids[i] = fmt.Sprintf("new%d", m.nextID+len(ids)+1)
			}
		}
		if err := stage(ids); err != nil {
			return nil, err
		}
		if m.loseCommit > 0 {
			m.loseCommit--
			m.nextID += len(ids)
			for i, ch := range changes {
				m.changes = append(m.changes, ch)
				out[i] = connector.WriteResult{ID: ids[i], Err: fmt.Errorf("%w: commit: connection reset", connector.ErrOutcomeUnknown)}
			}
			return out, nil
		}
	}
	for i, ch := range changes {
		m.changes = append(m.changes, ch)
		if err := m.failIDs[ch.ID]; err != nil {
			out[i] = connector.WriteResult{ID: ch.ID, Err: err}
			continue
		}
		switch ch.Op {
		case connector.OpCreate:
			m.nextID++
			id := fmt.Sprintf("new%d", m.nextID)
			r := &connector.Record{ID: id, Fields: map[string]any{"id": id}, UpdatedAt: m.tick()}
			for k, v := range ch.Fields {
				r.Fields[k] = v
			}
			m.recs[id] = r
			out[i].ID = id
		case connector.OpUpdate:
			r := m.recs[ch.ID]
			if r == nil || r.Deleted {
				out[i] = connector.WriteResult{ID: ch.ID, Err: connector.ErrNotFound}
				continue
			}
			if !ch.IfUnchangedSince.IsZero() && !r.UpdatedAt.Equal(ch.IfUnchangedSince) {
				out[i] = connector.WriteResult{ID: ch.ID, Err: connector.ErrChanged}
				continue
			}
			for k, v := range ch.Fields {
				r.Fields[k] = v
			}
			r.UpdatedAt = m.tick()
			out[i].ID = ch.ID
		case connector.OpDelete:
			r := m.recs[ch.ID]
			if r == nil || r.Deleted {
				out[i] = connector.WriteResult{ID: ch.ID, Err: connector.ErrNotFound}
				continue
			}
			if !ch.IfUnchangedSince.IsZero() && !r.UpdatedAt.Equal(ch.IfUnchangedSince) {
				out[i] = connector.WriteResult{ID: ch.ID, Err: connector.ErrChanged}
				continue
			}
			if ch.Soft {
				r.Deleted = true
				r.UpdatedAt = m.tick()
			} else {
				delete(m.recs, ch.ID)
			}
			out[i].ID = ch.ID
		}
	}
	return out, nil
}

func (m *memConn) Get(_ context.Context, ids []string) ([]connector.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gets++
	var out []connector.Record
	for _, id := range ids {
		if r := m.recs[id]; r != nil {
			out = append(out, clone(*r))
		}
	}
	return out, nil
}

// env is a workspace emulator delivering webhooks to a receiver, a
// memConn connector synced forward by the reconciler and back by an
// applier.
type env struct {
	t       *testing.T
	emu     *emulator.Server
	ws      *workspace.Client
	store   *state.Store
	path    string
	mem     *memConn
	mapper  *mapping.Mapper
	target  *Target
	applier *Applier
	recv    *webhook.Receiver
	hook    *httptest.Server
	// fwd, when set, is the workspace the forward pass writes through
	// (a test's wrapper of ws).
	fwd reconcile.Workspace
	// onSourceDelete is the forward pass's (default ignore).
	onSourceDelete policy.Delete
}

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetLevel(logrus.ErrorLevel)
	if os.Getenv("REVERSE_TEST_DEBUG") != "" {
		l.SetLevel(logrus.DebugLevel)
	}
	return logrus.NewEntry(l)
}

// testSpec maps id as the externalId; title flows only back, company
// only to the workspace.
var testSpec = mapping.Spec{
	ExternalID: "id",
	Fields: map[string]mapping.FieldSpec{
		"firstName":   {From: "first_name"},
		"lastName":    {From: "last_name"},
		"emails.work": {From: "email"},
		"role":        {From: "title", Direction: "to-crm"},
		"company":     {From: "company", Direction: "to-workspace"},
	},
}

func newEnv(t *testing.T, mod func(*Target)) *env {
	t.Helper()
	emu := emulator.NewServer(emulator.Options{Rate: -1, APIKey: "k", RetryBase: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond, MaxAttempts: 20,
		CustomFields: testCustomFields})
	t.Cleanup(emu.Close)
	ws, err := workspace.NewClient(workspace.ClientOptions{BaseURL: emu.URL, APIKey: "k", RateLimit: 1000, Burst: 100, Log: quietLog(),
		CustomFieldValues: emulator.TestCustomFieldValues()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.LoadCustomFields(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, emu: emu, ws: ws, mem: newMem(), path: filepath.Join(t.TempDir(), "state.db")}
	e.open()
	if e.mapper, err = mapping.Compile(testSpec, mapping.Both, nil); err != nil {
		t.Fatal(err)
	}
	e.mapper.SetCustomFieldTypes(ws)
	e.target = &Target{Name: "mem", Source: testSource, Mapper: e.mapper, Writer: e.mem, Direction: mapping.Both,
		OnWorkspaceCreate: "ignore", OnWorkspaceDelete: "ignore"}
	if mod != nil {
		mod(e.target)
	}
	e.newApplier()
	return e
}

// open opens the state file (again, after a simulated crash).
func (e *env) open() {
	st, err := state.Open(e.path, state.Options{NoSync: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = st
	e.t.Cleanup(func() { st.Close() })
}

func (e *env) newApplier() {
	a, err := New(Options{Store: StoreOf(e.store), Workspace: e.ws, Targets: []*Target{e.target}, MaxAttempts: 3, IdlePoll: 50 * time.Millisecond, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.applier = a
}

// listen starts a receiver on the state and subscribes it in the
// emulator, so that every contact change is delivered.
func (e *env) listen() {
	e.t.Helper()
	recv, err := webhook.New(webhook.Options{Store: webhook.StoreOf(e.store), Accepted: e.applier.Notify, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.recv = recv
	e.hook = httptest.NewServer(recv)
	e.t.Cleanup(e.hook.Close)
	wh, err := e.ws.CreateWebhook(context.Background(), workspace.WebhookCreate{URL: e.hook.URL,
		Events: []string{workspace.EventContactUpdated, workspace.EventContactDeleted}})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.store.Webhooks.PutSecret(state.WebhookSecret{WebhookID: wh.ID, Secret: wh.Key}); err != nil {
		e.t.Fatal(err)
	}
}

// listening starts a receiver and syncs one record both ways: its
// contact made, and the contact's creation delivered and applied.
func (e *env) listening() *env {
	e.t.Helper()
	e.listen()
	e.seed(1)
	e.waitDelivered()
	e.drain()
	return e
}

// forward runs one forward pass of the connector.
func (e *env) forward() reconcile.Summary {
	e.t.Helper()
	sum, err := e.forwardRun()
	if err != nil {
		e.t.Fatalf("forward pass: %v", err)
	}
	return sum
}

// forwardRun runs one forward pass and returns its error.
func (e *env) forwardRun() (reconcile.Summary, error) {
	e.t.Helper()
	return e.reconciler().Run(context.Background())
}

// reconciler is the forward direction as the daemon makes it for a
// connector whose edits flow back.
func (e *env) reconciler() *reconcile.Reconciler {
	e.t.Helper()
	var ws reconcile.Workspace = e.ws
	if e.fwd != nil {
		ws = e.fwd
	}
	// As the daemon does for a connector whose edits flow back.
	r, err := reconcile.New(reconcile.Options{Connector: "mem", Source: testSource,
		Type: connector.Type{Name: "mem", Writable: true, Incremental: true}, Reader: e.mem, Mapper: e.mapper,
		Store: reconcile.StoreOf(e.store), Workspace: ws, Log: quietLog(), Backoff: time.Millisecond,
		Conflict: e.target.Conflict, WeighAppEdits: true, OnSourceDelete: e.onSourceDelete, MassDeleteThreshold: 1,
		OnWorkspaceDelete: e.target.OnWorkspaceDelete, EditAfterDelete: e.target.EditAfterDelete})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// seed makes n records and syncs them forward: n linked contacts.
func (e *env) seed(n int) {
	e.t.Helper()
	for i := 1; i <= n; i++ {
		e.mem.put(strconv.Itoa(i), map[string]any{"id": strconv.Itoa(i), "first_name": fmt.Sprint("First", i),
			"last_name": fmt.Sprint("Last", i), "email": fmt.Sprintf("p%d@example.com", i), "title": nil, "company": "Acme"})
	}
	if sum := e.forward(); sum.Created != n {
		e.t.Fatalf("seed: forward pass %v, want %d creates", sum, n)
	}
}

func (e *env) link(ext string) state.Link {
	e.t.Helper()
	l, ok, err := e.store.Links.Get("mem", ext)
	if err != nil || !ok {
		e.t.Fatalf("link %s: %v %v", ext, ok, err)
	}
	return l
}

// contact returns the workspace contact of a record.
func (e *env) contact(ext string) workspace.Contact {
	e.t.Helper()
	c, err := e.ws.GetContact(context.Background(), e.link(ext).ContactID)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// appPatch edits a contact as a person in the app does.
func (e *env) appPatch(id string, p workspace.ContactPatch) workspace.Contact {
	e.t.Helper()
	return emutest.NewApp(e.t, e.emu.URL).Patch(id, p)
}

// event enqueues a contact.updated (or deleted) event of c directly.
func (e *env) event(id, typ string, c workspace.Contact) {
	e.t.Helper()
	body := eventBody(e.t, id, typ, c)
	if _, _, err := e.store.Inbox.Enqueue(state.InboxEvent{ID: id, Type: typ, ContactID: c.ID, ContactUpdatedAt: c.UpdatedAt, Body: body}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) drain() {
	e.t.Helper()
	if err := e.applier.Drain(context.Background()); err != nil {
		e.t.Fatalf("drain: %v", err)
	}
}

// waitInbox waits until the emulator delivered every event and the
// inbox holds n events.
func (e *env) waitInbox(n int) {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got, err := e.store.Inbox.Count()
		if err != nil {
			e.t.Fatal(err)
		}
		if got == n && e.allDelivered() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, _ := e.store.Inbox.Count()
	e.t.Fatalf("inbox holds %d events, want %d (all delivered: %v)", got, n, e.allDelivered())
}

// waitDelivered waits until the emulator delivered every event.
func (e *env) waitDelivered() {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !e.allDelivered() {
		if time.Now().After(deadline) {
			e.t.Fatal("the emulator did not deliver every event")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) allDelivered() bool {
	for _, wh := range e.emu.Webhooks() {
		for _, d := range e.emu.Deliveries(wh.ID) {
			if d.Status != emulator.DeliveryDelivered {
				return false
			}
		}
	}
	return true
}

func ptr(s string) *string { return &s }
