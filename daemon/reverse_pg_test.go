package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	_ "github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// pgEnv is syncd (the daemon's reverse direction with its receiver over
// HTTP) between an emulated workspace and a PostgreSQL table whose
// trigger moves updated_at on every UPDATE.
type pgEnv struct {
	t      *testing.T
	pool   *pgxpool.Pool
	table  string
	emu    *emulator.Server
	api    *workspace.Client
	cfg    *config.Config
	d      *daemon.Daemon
	rev    *daemon.Running
	hook   string // the receiver's URL
	secret string
	closed bool
}

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func newPGEnv(t *testing.T, rows int, emuOpts emulator.Options) *pgEnv {
	t.Helper()
	return newPGEnvBatch(t, rows, emuOpts, 500) // the connector's default
}

// newPGEnvBatch is newPGEnv with the connector's batchSize.
func newPGEnvBatch(t *testing.T, rows int, emuOpts emulator.Options, batchSize int) *pgEnv {
	t.Helper()
	return newPGEnvWith(t, rows, emuOpts, batchSize, nil)
}

// newPGEnvWith is newPGEnvBatch with mod applied to the connector's
// configuration (when not nil).
func newPGEnvWith(t *testing.T, rows int, emuOpts emulator.Options, batchSize int, mod func(*configfile.Connector)) *pgEnv {
	t.Helper()
	pool := pgtest.Connect(t)
	schema := pgtest.NewSchema(t, pool)
	table := schema + ".contacts"
	pgtest.Exec(t, pool, `CREATE TABLE `+table+` (
		id bigserial PRIMARY KEY, first_name text, last_name text, email text, title text,
		updated_at timestamptz NOT NULL DEFAULT now())`)
	pgtest.Exec(t, pool, `CREATE FUNCTION `+schema+`.touch() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN NEW.updated_at = clock_timestamp(); RETURN NEW; END $$`)
	pgtest.Exec(t, pool, `CREATE TRIGGER touch BEFORE UPDATE ON `+table+` FOR EACH ROW EXECUTE FUNCTION `+schema+`.touch()`)
	if rows > 0 {
		pgtest.Exec(t, pool, `INSERT INTO `+table+` (first_name, last_name, email)
			SELECT 'First' || i, 'Last' || i, 'p' || i || '@example.com' FROM generate_series(1, $1::int) AS i`, rows)
	}

	if emuOpts.Rate == 0 {
		emuOpts.Rate = -1
	}
	if emuOpts.RetryBase == 0 {
		emuOpts.RetryBase, emuOpts.RetryMax = 50*time.Millisecond, 500*time.Millisecond
	}
	emu := emulator.NewServer(emuOpts)
	t.Cleanup(emu.Close)
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(t.TempDir(), "syncd.db")},
		Webhooks:  configfile.Webhooks{Listen: "127.0.0.1:0", Path: "/hooks/workspace"},
		Connectors: []configfile.Connector{{Name: "db", Type: "postgres", Direction: policy.Both, Schedule: "@every 1h",
			Settings: map[string]any{"dsn": pgtest.URL(), "table": table, "batchSize": batchSize, "changes": "poll"},
			Mapping:  configfile.Names(),
		}},
	}
	f.Connectors[0].Mapping.Fields["role"] = configfile.Field{From: "title", Direction: policy.ToCRM}
	if mod != nil {
		mod(&f.Connectors[0])
	}
	cfg, err := config.ParseConfig(f.YAML(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	api, err := workspace.NewClient(workspace.ClientOptions{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100, Log: logrus.NewEntry(quiet())})
	if err != nil {
		t.Fatal(err)
	}
	e := &pgEnv{t: t, pool: pool, table: table, emu: emu, api: api, cfg: cfg}
	e.d, err = daemon.New(context.Background(), cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	if rows > 0 {
		sums, err := e.d.RunOnce(context.Background())
		if err != nil || sums[0].Created != rows {
			t.Fatalf("initial forward pass: %v %v", sums, err)
		}
	}
	e.start()
	return e
}

// start starts the reverse direction and subscribes its receiver.
func (e *pgEnv) start() {
	e.t.Helper()
	e.rev, e.hook, e.secret = startSubscribed(e.t, e.d, e.api, e.cfg.Webhooks.Path)
}

// startSubscribed starts d's reverse direction and subscribes its
// receiver (at path) to the workspace of api; it returns the running
// part, the receiver's URL and the subscription's secret.
func startSubscribed(t *testing.T, d *daemon.Daemon, api *workspace.Client, path string) (rev *daemon.Running, hook, secret string) {
	t.Helper()
	rev, err := d.StartReverse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hook = "http://" + rev.Addr + path
	reg, err := daemon.EnsureWebhook(context.Background(), api, d.Store().Webhooks, hook, logrus.NewEntry(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	cur, _, err := d.Store().Webhooks.Secrets()
	if err != nil || cur.WebhookID != reg.Webhook.ID {
		t.Fatalf("secret of %s: %+v %v", reg.Webhook.ID, cur.WebhookID, err)
	}
	return rev, hook, cur.Secret
}

func (e *pgEnv) close() {
	if e.closed {
		return
	}
	e.closed = true
	e.rev.Stop()
	if err := e.d.Close(); err != nil {
		e.t.Error(err)
	}
}

func (e *pgEnv) contactOf(id int) workspace.Contact {
	e.t.Helper()
	l, ok, err := e.d.Store().Links.Get("db", fmt.Sprint(id))
	if err != nil || !ok {
		e.t.Fatalf("link of row %d: %v %v", id, ok, err)
	}
	c, err := e.api.GetContact(context.Background(), l.ContactID)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *pgEnv) appPatch(contactID string, p workspace.ContactPatch) workspace.Contact {
	e.t.Helper()
	return emutest.NewApp(e.t, e.emu.URL).Patch(contactID, p)
}

func (e *pgEnv) column(id int, col string) string {
	e.t.Helper()
	var v *string
	err := e.pool.QueryRow(context.Background(), "SELECT "+pgx.Identifier{col}.Sanitize()+" FROM "+e.table+" WHERE id = $1", id).Scan(&v)
	if err != nil {
		e.t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return *v
}

func (e *pgEnv) inbox() int {
	n, err := e.d.Store().Inbox.Count()
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// waitQuiet waits until the emulator delivered everything and the
// applier emptied the inbox.
func (e *pgEnv) waitQuiet(timeout time.Duration) {
	e.t.Helper()
	waitReverseQuiet(e.t, e.emu.Emulator, e.d, e.rev, timeout)
}

// waitReverseQuiet waits until emu delivered everything and d's applier
// (of rev) emptied the inbox.
func waitReverseQuiet(t *testing.T, emu *emulator.Emulator, d *daemon.Daemon, rev *daemon.Running, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		delivered := true
		for _, wh := range emu.Webhooks() {
			for _, dl := range emu.Deliveries(wh.ID) {
				delivered = delivered && dl.Status != emulator.DeliveryPending
			}
		}
		inbox, err := d.Store().Inbox.Count()
		if err != nil {
			t.Fatal(err)
		}
		if delivered && inbox == 0 && rev.Applier.Idle() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not quiet after %v: inbox %d, all delivered %v", timeout, inbox, delivered)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// updates returns the table's n_tup_upd. Statistics reach the view when
// a backend flushes them (at most every second while busy, at exit, or
// when asked with pg_stat_force_next_flush); callers poll.
func (e *pgEnv) updates() int64 {
	e.t.Helper()
	var n int64
	err := e.pool.QueryRow(context.Background(), "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = $1::regclass", e.table).Scan(&n)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// waitUpdates polls n_tup_upd until it reaches want (failing after
// timeout), then keeps watching for settle to be sure it moves no further.
func (e *pgEnv) waitUpdates(want int64, timeout, settle time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for e.updates() < want {
		if time.Now().After(deadline) {
			e.t.Fatalf("n_tup_upd = %d, want %d", e.updates(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	end := time.Now().Add(settle)
	for time.Now().Before(end) {
		if got := e.updates(); got != want {
			e.t.Fatalf("n_tup_upd = %d, want exactly %d", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ownUpdate runs an UPDATE on a connection of its own and has its
// statistics flushed at once.
func (e *pgEnv) ownUpdate(sql string, args ...any) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		e.t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		e.t.Fatal(err)
	}
}

// post sends a signed delivery to the receiver.
func (e *pgEnv) post(h http.Header, body []byte) int {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.hook, bytes.NewReader(body))
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// signedEvent is a signed contact.updated delivery of c in the envelope
// of the service's webhook guide (data.object).
func signedEvent(t testing.TB, secret, msgID string, c workspace.Contact) (http.Header, []byte) {
	res, _ := json.Marshal(c)
	body, _ := json.Marshal(workspace.Event{ID: msgID, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion,
		CreatedAt: time.Now().UTC(), Type: workspace.EventContactUpdated, Data: workspace.EventData{Object: res}})
	h, err := signature.SignHeaders(secret, msgID, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	return h, body
}

// TestPGAppEditReachesTableWithinTwoSeconds: an edit made in the app
// reaches the table through the emulator's signed deliveries, in the
// envelope of the service's webhook guide (data.object, the default) and
// in the older data.resource shape (behind the emulator's option).
func TestPGAppEditReachesTableWithinTwoSeconds(t *testing.T) {
	for _, tt := range []struct{ name, envelope string }{
		{"documented data.object envelope", ""},
		{"older data.resource envelope", emulator.EnvelopeResource},
	} {
		t.Run(tt.name, func(t *testing.T) { testAppEditReachesTable(t, tt.envelope) })
	}
}

func testAppEditReachesTable(t *testing.T, envelope string) {
	e := newPGEnv(t, 5, emulator.Options{WebhookEnvelope: envelope})
	before := e.updates()
	c := e.contactOf(3)
	start := time.Now()
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{
		LastName: workspace.Some("Edited"), Role: workspace.Some("Buyer")}})
	for e.column(3, "last_name") != "Edited" {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("the edit did not reach the table within 2s (last_name %q)", e.column(3, "last_name"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("app edit reached the table in %v", time.Since(start).Round(time.Millisecond))
	if got := e.column(3, "title"); got != "Buyer" {
		t.Fatalf("title = %q, want Buyer", got)
	}
	if st := e.rev.Receiver.Stats(); st.Accepted == 0 || st.Refused != 0 {
		t.Fatalf("receiver %+v: want the deliveries accepted, none refused", st)
	}
	if e.column(2, "last_name") != "Last2" {
		t.Fatal("another row changed")
	}
	e.waitQuiet(5 * time.Second)
	// The forward pass reads the row the write-back changed: no PATCH.
	patches := e.emu.Stats().Requests["PATCH /v1/contacts/{id}"]
	if sums, err := e.d.RunOnce(context.Background()); err != nil || sums[0].Updated != 0 {
		t.Fatalf("forward pass after the write-back: %v %v", sums, err)
	}
	if got := e.emu.Stats().Requests["PATCH /v1/contacts/{id}"]; got != patches {
		t.Fatalf("%d workspace PATCHes after the write-back, want none", got-patches)
	}
	// The write-back was one UPDATE: syncd's connections flush their
	// statistics when they close.
	e.close()
	e.waitUpdates(before+1, 15*time.Second, 500*time.Millisecond)
}

func TestPGForwardChangeCausesNoWriteBack(t *testing.T) {
	e := newPGEnv(t, 5, emulator.Options{})
	base := e.updates()
	e.ownUpdate("UPDATE " + e.table + " SET last_name = 'FromTable', email = 'new@example.com' WHERE id = 2")
	e.waitUpdates(base+1, 15*time.Second, 0)

	sums, err := e.d.RunOnce(context.Background())
	if err != nil || sums[0].Updated != 1 {
		t.Fatalf("forward pass: %v %v", sums, err)
	}
	if got := e.contactOf(2).DefaultFields.LastName; got == nil || *got != "FromTable" {
		t.Fatalf("contact lastName %v", got)
	}
	// The PATCH's webhook is delivered asynchronously: wait for the echo
	// to reach the applier (before that, the receiver may look quiet
	// with nothing delivered yet), then for the applier to settle.
	deadline := time.Now().Add(10 * time.Second)
	for e.rev.Applier.Stats().Events < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	e.waitQuiet(5 * time.Second)
	st := e.rev.Applier.Stats()
	if st.Events < 1 || st.Written != 0 {
		t.Fatalf("applier stats %+v: want the echo received and nothing written", st)
	}
	// Everything syncd's connections did reaches the statistics when
	// they close: the counter moved by the test's own UPDATE only.
	e.close()
	e.waitUpdates(base+1, 15*time.Second, 1500*time.Millisecond)
}

// delivery is one signed webhook delivery.
type delivery struct {
	h    http.Header
	body []byte
}

func TestPGBurstOfShuffledAndRepeatedEvents(t *testing.T) {
	const rows, versions = 200, 5 // 1,000 events
	e := newPGEnv(t, rows, emulator.Options{})
	var ds []delivery
	latest := map[int]string{}
	for id := 1; id <= rows; id++ {
		c := e.contactOf(id)
		for v := 1; v <= versions; v++ {
			x := c
			name := fmt.Sprintf("Last%d-v%d", id, v)
			x.DefaultFields.LastName = &name
			x.DefaultFields.Role = ptr(fmt.Sprint("role-v", v))
			x.UpdatedAt = c.UpdatedAt.Add(time.Duration(v) * time.Second)
			h, body := signedEvent(t, e.secret, fmt.Sprintf("msg_%d_%d", id, v), x)
			ds = append(ds, delivery{h, body})
			latest[id] = name
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	n := len(ds)
	for i := 0; i < n*3/10; i++ { // 30% delivered twice
		ds = append(ds, ds[rng.IntN(n)])
	}
	rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })

	start := time.Now()
	postAll(t, e.hook, ds)
	posted := time.Since(start)
	e.waitQuiet(30 * time.Second)
	t.Logf("%d deliveries (%d events) posted in %v, applied after %v; receiver %+v; applier %+v",
		len(ds), n, posted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), e.rev.Receiver.Stats(), e.rev.Applier.Stats())

	got := map[int]string{}
	rowsQ, err := e.pool.Query(context.Background(), "SELECT id, last_name, title FROM "+e.table)
	if err != nil {
		t.Fatal(err)
	}
	for rowsQ.Next() {
		var id int
		var last, title string
		if err := rowsQ.Scan(&id, &last, &title); err != nil {
			t.Fatal(err)
		}
		got[id] = last
		if title != fmt.Sprint("role-v", versions) {
			t.Errorf("row %d title %q", id, title)
		}
	}
	if len(got) != rows {
		t.Fatalf("%d rows, want %d", len(got), rows)
	}
	for id, want := range latest {
		if got[id] != want {
			t.Errorf("row %d last_name %q, want %q", id, got[id], want)
		}
	}
	if st := e.rev.Receiver.Stats(); st.Accepted != int64(n) || st.Duplicates != int64(len(ds)-n) {
		t.Errorf("receiver %+v: want %d accepted and %d duplicates", st, n, len(ds)-n)
	}
}

// postAll posts the deliveries to hook from 8 senders at once, each
// expecting a 200.
func postAll(t *testing.T, hook string, ds []delivery) {
	t.Helper()
	work := make(chan delivery)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for d := range work {
				req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(d.body))
				for k, vs := range d.h {
					req.Header[k] = vs
				}
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for _, d := range ds {
		work <- d
	}
	close(work)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestPGRefusedDeliveriesChangeNothing(t *testing.T) {
	e := newPGEnv(t, 2, emulator.Options{})
	c := e.contactOf(1)
	c.DefaultFields.LastName = ptr("Forged")
	c.UpdatedAt = c.UpdatedAt.Add(time.Minute)
	_, body := signedEvent(t, e.secret, "msg_x", c)
	stale, _ := signature.SignHeaders(e.secret, "msg_x", time.Now().Add(-10*time.Minute), body)
	other, _ := signature.SignHeaders("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "msg_x", time.Now(), body)
	big := append(body[:len(body)-1:len(body)-1], []byte(`,"pad":"`+strings.Repeat("x", 2<<20)+`"}`)...)
	bigSigned, _ := signature.SignHeaders(e.secret, "msg_x", time.Now(), big)
	junk := []byte(`{"id":"msg_x","type":"contact.updated","data":{"resource":{"id":42}}}`)
	junkSigned, _ := signature.SignHeaders(e.secret, "msg_x", time.Now(), junk)
	tests := []struct {
		name string
		h    http.Header
		body []byte
		want int
	}{
		{"bad signature", other, body, 401},
		{"no signature", http.Header{}, body, 401},
		{"stale timestamp", stale, body, 401},
		{"oversized body", bigSigned, big, 413},
		{"malformed envelope", junkSigned, junk, 400},
	}
	for _, tt := range tests {
		if got := e.post(tt.h, tt.body); got != tt.want {
			t.Errorf("%s: answered %d, want %d", tt.name, got, tt.want)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := e.inbox(); n != 0 {
		t.Fatalf("refused deliveries left %d inbox events", n)
	}
	if got := e.column(1, "last_name"); got != "Last1" {
		t.Fatalf("row 1 last_name %q after refused deliveries", got)
	}
	if seen, err := e.d.Store().Inbox.Seen("msg_x"); err != nil || seen {
		t.Fatalf("a refused delivery's id was marked seen (%v)", err)
	}
}

func TestPGEditsWhileStoppedArriveOnStart(t *testing.T) {
	// One delivery attempt only: what syncd misses is not delivered again.
	e := newPGEnv(t, 3, emulator.Options{MaxAttempts: 1})
	e.rev.Stop()
	c := e.contactOf(2)
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("WhileAway")}})
	deadline := time.Now().Add(5 * time.Second)
	for {
		ds := e.emu.Deliveries(e.emu.Webhooks()[0].ID)
		if len(ds) > 0 && ds[len(ds)-1].Status == emulator.DeliveryFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the delivery to the stopped receiver did not fail")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := e.column(2, "last_name"); got != "Last2" {
		t.Fatalf("row changed while syncd was stopped: %q", got)
	}
	e.start() // catch-up runs at start-up
	deadline = time.Now().Add(5 * time.Second)
	for e.column(2, "last_name") != "WhileAway" {
		if time.Now().After(deadline) {
			t.Fatalf("the edit made while stopped did not arrive: %q", e.column(2, "last_name"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ptr(s string) *string { return &s }

func TestPGRunReverseOnceCatchesUpAndDrains(t *testing.T) {
	e := newPGEnv(t, 3, emulator.Options{MaxAttempts: 1})
	e.rev.Stop()
	c := e.contactOf(1)
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Once")}})
	st, err := e.d.RunReverseOnce(context.Background())
	if err != nil || st.Written != 1 || st.Events != 1 {
		t.Fatalf("RunReverseOnce: %+v %v", st, err)
	}
	if got := e.column(1, "last_name"); got != "Once" {
		t.Fatalf("last_name %q", got)
	}
}
