package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

const (
	secret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	oldSecret = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	otherKey  = "whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

var now = time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)

type fixture struct {
	store *state.Store
	recv  *Receiver
	srv   *httptest.Server
	logs  *bytes.Buffer
	woken int
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	clock := func() time.Time { return now }
	st, err := state.Open(filepath.Join(t.TempDir(), "state.db"), state.Options{NoSync: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{store: st, logs: &bytes.Buffer{}}
	log := logrus.New()
	log.SetOutput(f.logs)
	log.SetLevel(logrus.DebugLevel)
	opts := Options{Store: StoreOf(st), Now: clock, MaxBodyBytes: 4096, Log: logrus.NewEntry(log), Accepted: func() { f.woken++ }}
	if mod != nil {
		mod(&opts)
	}
	if f.recv, err = New(opts); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.recv)
	t.Cleanup(f.srv.Close)
	return f
}

// contactBody is a delivery in the documented envelope: {id, object:
// "event", apiVersion, createdAt, type, data: {object: <the contact,
// tagged "object": "contact">}}.
func contactBody(t *testing.T, evID, typ, contactID string, updated time.Time) []byte {
	t.Helper()
	first := "Ann"
	res, _ := json.Marshal(struct {
		Object string `json:"object"`
		workspace.Contact
	}{workspace.ContactObject, workspace.Contact{ID: contactID, DefaultFields: workspace.DefaultFields{FirstName: &first},
		CustomFields: []workspace.CustomField{}, CreatedAt: updated, UpdatedAt: updated}})
	b, _ := json.Marshal(workspace.Event{ID: evID, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion,
		CreatedAt: updated, Type: typ, Data: workspace.EventData{Object: res}})
	return b
}

// signed returns the Standard Webhooks headers of body by key at ts.
func signed(t *testing.T, key, id string, ts time.Time, body []byte) http.Header {
	t.Helper()
	h, err := signature.SignHeaders(key, id, ts, body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (f *fixture) post(t *testing.T, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, bytes.NewReader(body))
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *fixture) inbox(t *testing.T) []state.InboxEvent {
	t.Helper()
	evs, err := f.store.Inbox.Pending(0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func putSecret(t *testing.T, st *state.Store, key string, created, expires time.Time) {
	t.Helper()
	if err := st.Webhooks.PutSecret(state.WebhookSecret{WebhookID: "1", Secret: key, CreatedAt: created, ExpiresAt: expires}); err != nil {
		t.Fatal(err)
	}
}

func TestRefusalsChangeNothing(t *testing.T) {
	good := contactBody(t, "EV1", workspace.EventContactUpdated, "C1", now)
	big := contactBody(t, "EV1", workspace.EventContactUpdated, strings.Repeat("x", 5000), now)
	tests := []struct {
		name       string
		headers    func(t *testing.T) http.Header
		body       []byte
		wantStatus int
		wantReason string
	}{
		{"no signature", func(*testing.T) http.Header { return http.Header{} }, good, 401, "no signature"},
		{"signed by another secret", func(t *testing.T) http.Header { return signed(t, otherKey, "EV1", now, good) }, good, 401, "does not match"},
		{"tampered body", func(t *testing.T) http.Header { return signed(t, secret, "EV1", now, good) },
			bytes.Replace(good, []byte("Ann"), []byte("Eve"), 1), 401, "does not match"},
		{"stale timestamp", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now.Add(-5*time.Minute-time.Second), good)
		}, good, 401, "timestamp"},
		{"timestamp from the future", func(t *testing.T) http.Header { return signed(t, secret, "EV1", now.Add(6*time.Minute), good) }, good, 401, "timestamp"},
		{"timestamp not a number", func(t *testing.T) http.Header {
			h := signed(t, secret, "EV1", now, good)
			h.Set(signature.HeaderTimestamp, "soon")
			return h
		}, good, 400, "malformed signature"},
		{"oversized body", func(t *testing.T) http.Header { return signed(t, secret, "EV1", now, big) }, big, 413, "over 4096 bytes"},
		{"malformed JSON", func(t *testing.T) http.Header { return signed(t, secret, "EV1", now, []byte(`{"id":`)) }, []byte(`{"id":`), 400, "not a JSON envelope"},
		{"JSON array", func(t *testing.T) http.Header { return signed(t, secret, "EV1", now, []byte(`[1]`)) }, []byte(`[1]`), 400, "not a JSON envelope"},
		{"no type", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","data":{"resource":{"id":"C1","updatedAt":"2026-03-30T12:00:00Z"}}}`))
		}, []byte(`{"id":"EV1","data":{"resource":{"id":"C1","updatedAt":"2026-03-30T12:00:00Z"}}}`), 400, "no type"},
		{"no contact in data", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{}}`), 400, "neither data.object nor data.resource holds one (data is empty)"},
		{"no data", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.deleted"}`))
		}, []byte(`{"id":"EV1","type":"contact.deleted"}`), 400, "neither data.object nor data.resource holds one (no data)"},
		{"null object, no resource", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":null}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":null}}`), 400, `data has \"object\"`},
		{"object without id", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":{"object":"contact","updatedAt":"2026-03-30T12:00:00Z"}}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":{"object":"contact","updatedAt":"2026-03-30T12:00:00Z"}}}`), 400, "data.object has no id"},
		{"object not a contact", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":"CT1"}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{"object":"CT1"}}`), 400, "data.object is not a contact object"},
		{"resource without id", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{"resource":{"updatedAt":"2026-03-30T12:00:00Z"}}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{"resource":{"updatedAt":"2026-03-30T12:00:00Z"}}}`), 400, "no id"},
		{"resource without updatedAt", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.deleted","data":{"resource":{"id":"C1"}}}`))
		}, []byte(`{"id":"EV1","type":"contact.deleted","data":{"resource":{"id":"C1"}}}`), 400, "no updatedAt"},
		{"updatedAt not a time", func(t *testing.T) http.Header {
			return signed(t, secret, "EV1", now, []byte(`{"id":"EV1","type":"contact.updated","data":{"resource":{"id":"C1","updatedAt":"yesterday"}}}`))
		}, []byte(`{"id":"EV1","type":"contact.updated","data":{"resource":{"id":"C1","updatedAt":"yesterday"}}}`), 400, "RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			putSecret(t, f.store, secret, now, time.Time{})
			status, body := f.post(t, tt.headers(t), tt.body)
			if status != tt.wantStatus || !strings.Contains(body, tt.wantReason) {
				t.Fatalf("answer %d %s, want %d with %q", status, body, tt.wantStatus, tt.wantReason)
			}
			if n := len(f.inbox(t)); n != 0 || f.woken != 0 {
				t.Fatalf("a refused delivery left %d inbox events (woke the applier %d times)", n, f.woken)
			}
			// Nothing was marked seen either: the genuine delivery of the
			// same id is accepted afterwards.
			if status, body := f.post(t, signed(t, secret, "EV1", now, good), good); status != 200 || !strings.Contains(body, "accepted") {
				t.Fatalf("genuine delivery after the refusal: %d %s", status, body)
			}
			if logs := f.logs.String(); strings.Contains(logs, strings.TrimPrefix(secret, "whsec_")) || strings.Contains(logs, "v1,") {
				t.Fatalf("logs hold a secret or a signature:\n%s", logs)
			}
		})
	}
}

func TestAcceptDedupAndIgnore(t *testing.T) {
	f := newFixture(t, nil)
	putSecret(t, f.store, secret, now, time.Time{})
	at := now.Add(-time.Hour).Truncate(time.Millisecond)
	body := contactBody(t, "EV1", workspace.EventContactUpdated, "C1", at)
	status, ans := f.post(t, signed(t, secret, "msg_1", now.Add(-4*time.Minute), body), body)
	if status != 200 || !strings.Contains(ans, "accepted") {
		t.Fatalf("first delivery: %d %s", status, ans)
	}
	// The same delivery again (the service retries after a lost answer).
	status, ans = f.post(t, signed(t, secret, "msg_1", now, body), body)
	if status != 200 || !strings.Contains(ans, "duplicate") {
		t.Fatalf("second delivery: %d %s", status, ans)
	}
	evs := f.inbox(t)
	if len(evs) != 1 {
		t.Fatalf("inbox holds %d events, want 1", len(evs))
	}
	e := evs[0]
	if e.ID != "msg_1" || e.Type != workspace.EventContactUpdated || e.ContactID != "C1" || !e.ContactUpdatedAt.Equal(at) || !bytes.Equal(e.Body, body) {
		t.Fatalf("inbox event %+v", e)
	}
	// An event type syncd does not handle: acknowledged, dropped.
	other := []byte(`{"id":"EV2","type":"message.received","data":{"object":{"id":"M1"}}}`)
	status, ans = f.post(t, signed(t, secret, "msg_2", now, other), other)
	if status != 200 || !strings.Contains(ans, "ignored") {
		t.Fatalf("unhandled type: %d %s", status, ans)
	}
	if n := len(f.inbox(t)); n != 1 {
		t.Fatalf("inbox holds %d events after an unhandled type, want 1", n)
	}
	st := f.recv.Stats()
	if st.Accepted != 1 || st.Duplicates != 1 || st.Ignored != 1 || st.Refused != 0 || f.woken != 1 {
		t.Fatalf("stats %+v, woken %d", st, f.woken)
	}
}

func TestSecretsFromState(t *testing.T) {
	body := contactBody(t, "EV1", workspace.EventContactUpdated, "C1", now)
	tests := []struct {
		name    string
		secrets func(st *state.Store)
		legacy  bool
		sign    func(t *testing.T) http.Header
		want    int
	}{
		{"no secret stored", func(*state.Store) {}, false, func(t *testing.T) http.Header { return signed(t, secret, "m", now, body) }, 503},
		{"old secret within its grace", func(st *state.Store) {
			putSecret(t, st, oldSecret, now.Add(-48*time.Hour), now.Add(time.Hour))
			putSecret(t, st, secret, now.Add(-time.Minute), time.Time{})
		}, false, func(t *testing.T) http.Header { return signed(t, oldSecret, "m", now, body) }, 200},
		{"old secret after its grace", func(st *state.Store) {
			putSecret(t, st, oldSecret, now.Add(-48*time.Hour), now.Add(-time.Second))
			putSecret(t, st, secret, now.Add(-time.Minute), time.Time{})
		}, false, func(t *testing.T) http.Header { return signed(t, oldSecret, "m", now, body) }, 401},
		{"new secret after a rotation", func(st *state.Store) {
			putSecret(t, st, oldSecret, now.Add(-48*time.Hour), now.Add(time.Hour))
			putSecret(t, st, secret, now.Add(-time.Minute), time.Time{})
		}, false, func(t *testing.T) http.Header { return signed(t, secret, "m", now, body) }, 200},
		{"legacy scheme enabled", func(st *state.Store) { putSecret(t, st, secret, now, time.Time{}) }, true, func(t *testing.T) http.Header {
			v, err := signature.SignLegacy(secret, now, body)
			if err != nil {
				t.Fatal(err)
			}
			return http.Header{"Openphone-Signature": {v}}
		}, 200},
		{"legacy scheme disabled", func(st *state.Store) { putSecret(t, st, secret, now, time.Time{}) }, false, func(t *testing.T) http.Header {
			v, _ := signature.SignLegacy(secret, now, body)
			return http.Header{"Openphone-Signature": {v}}
		}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) { o.Legacy = tt.legacy })
			tt.secrets(f.store)
			status, ans := f.post(t, tt.sign(t), body)
			if status != tt.want {
				t.Fatalf("answer %d %s, want %d", status, ans, tt.want)
			}
			wantInbox := 0
			if tt.want == 200 {
				wantInbox = 1
			}
			if n := len(f.inbox(t)); n != wantInbox {
				t.Fatalf("inbox holds %d events, want %d", n, wantInbox)
			}
		})
	}
}

func TestLegacyDeliveryDeduplicatesOnEventID(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Legacy = true })
	putSecret(t, f.store, secret, now, time.Time{})
	body := contactBody(t, "EV7", workspace.EventContactDeleted, "C1", now)
	for i := range 2 {
		v, _ := signature.SignLegacy(secret, now.Add(time.Duration(i)*time.Second), body)
		if status, ans := f.post(t, http.Header{"Openphone-Signature": {v}}, body); status != 200 {
			t.Fatalf("delivery %d: %d %s", i, status, ans)
		}
	}
	evs := f.inbox(t)
	if len(evs) != 1 || evs[0].ID != "EV7" || evs[0].Type != workspace.EventContactDeleted {
		t.Fatalf("inbox %+v, want the one event EV7", evs)
	}
}

func TestMethodAndChunkedOversize(t *testing.T) {
	f := newFixture(t, nil)
	putSecret(t, f.store, secret, now, time.Time{})
	resp, err := http.Get(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET answered %d", resp.StatusCode)
	}
	// A body without Content-Length is cut at the limit all the same.
	big := contactBody(t, "EV1", workspace.EventContactUpdated, strings.Repeat("y", 6000), now)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL, io.MultiReader(bytes.NewReader(big)))
	req.ContentLength = -1
	for k, vs := range signed(t, secret, "EV1", now, big) {
		req.Header[k] = vs
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || len(f.inbox(t)) != 0 {
		t.Fatalf("chunked oversized body: %d, inbox %d", resp.StatusCode, len(f.inbox(t)))
	}
}

// TestManyConcurrentDeliveries posts 200 distinct and 100 repeated
// deliveries at once: exactly 200 inbox events.
func TestManyConcurrentDeliveries(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Accepted = nil })
	putSecret(t, f.store, secret, now, time.Time{})
	type delivery struct {
		h    http.Header
		body []byte
	}
	var ds []delivery
	for i := range 200 {
		id := "msg_" + strconv.Itoa(i)
		b := contactBody(t, id, workspace.EventContactUpdated, fmt.Sprint("C", i%20), now.Add(time.Duration(i)*time.Millisecond))
		ds = append(ds, delivery{signed(t, secret, id, now, b), b})
		if i%2 == 0 {
			ds = append(ds, delivery{signed(t, secret, id, now, b), b})
		}
	}
	errs := make(chan error, len(ds))
	for _, d := range ds {
		go func() {
			req, _ := http.NewRequest(http.MethodPost, f.srv.URL, bytes.NewReader(d.body))
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
			errs <- err
		}()
	}
	for range ds {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.inbox(t)); n != 200 {
		t.Fatalf("inbox holds %d events, want 200", n)
	}
	if st := f.recv.Stats(); st.Accepted != 200 || st.Duplicates != 100 {
		t.Fatalf("stats %+v", st)
	}
}
