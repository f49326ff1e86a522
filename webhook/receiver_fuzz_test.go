package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

// FuzzParse feeds arbitrary bodies to the envelope parser (seed corpus in
// testdata/fuzz/FuzzParse). Properties: it never panics; an accepted
// envelope has a trimmed, non-empty id and type; an accepted contact
// event names its contact, has its updatedAt in UTC, and the contact the
// applier reads (data.object, else data.resource) decodes.
func FuzzParse(f *testing.F) {
	for _, b := range parseSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := parse(body)
		if err != nil {
			if ev != (event{}) {
				t.Fatalf("refused envelope returned a partial event %+v", ev)
			}
			return
		}
		if ev.ID == "" || ev.ID != strings.TrimSpace(ev.ID) || ev.Type == "" || ev.Type != strings.TrimSpace(ev.Type) {
			t.Fatalf("accepted envelope with id %q type %q", ev.ID, ev.Type)
		}
		if !strings.HasPrefix(ev.Type, "contact.") {
			return
		}
		if ev.ContactID == "" || ev.UpdatedAt.Location() != time.UTC {
			t.Fatalf("accepted contact event %+v", ev)
		}
		// As the applier reads it (reverse/round.go): data only.
		var env struct{ Data workspace.EventData }
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("accepted body's data does not decode: %v", err)
		}
		raw, where := env.Data.Payload()
		if where == "" {
			t.Fatalf("accepted contact event has neither data.object nor data.resource")
		}
		var c workspace.Contact
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("accepted %s does not decode as a contact: %v", where, err)
		}
		if c.ID != "" && strings.TrimSpace(c.ID) != ev.ContactID {
			t.Fatalf("contact id %q, event says %q", c.ID, ev.ContactID)
		}
	})
}

// FuzzReceiver posts arbitrary bodies, signed or not, to the receiver.
// Properties: the answer is 200, 400, 401 or 413, never a 5xx; a body is
// written to the inbox exactly when it was signed with the secret, is not
// over the limit and is a valid envelope of a handled type; a second
// delivery of it is acknowledged without a second entry; an unsigned or
// tampered delivery changes nothing.
func FuzzReceiver(f *testing.F) {
	for _, b := range parseSeeds() {
		f.Add(b, true, false)
		f.Add(b, false, false)
		f.Add(b, true, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, sign, tamper bool) {
		st := &memStore{secret: secret}
		log := logrus.New()
		log.SetOutput(nopWriter{})
		r, err := New(Options{Store: Store{Webhooks: st, Inbox: st}, Now: func() time.Time { return now }, MaxBodyBytes: 4096, Log: logrus.NewEntry(log)})
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		if sign {
			if h, err = signature.SignHeaders(secret, "msg_fuzz", now, body); err != nil {
				t.Fatal(err)
			}
		}
		sent := body
		if tamper {
			sent = append(append([]byte{}, body...), ' ')
		}
		status, answer := serve(r, h, sent)
		switch status {
		case http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d (%s)", status, answer)
		}
		var a struct{ Status, Reason string }
		if err := json.Unmarshal([]byte(answer), &a); err != nil || a.Status == "" {
			t.Fatalf("answer %q is not the receiver's JSON", answer)
		}
		authentic := sign && !tamper && len(sent) <= 4096
		ev, perr := parse(sent)
		handled := perr == nil && (ev.Type == workspace.EventContactUpdated || ev.Type == workspace.EventContactDeleted)
		wantEntry := authentic && handled
		if got := len(st.events); (got == 1) != wantEntry || got > 1 {
			t.Fatalf("inbox holds %d events after a delivery (signed %v, tampered %v, parse error %v, status %d %s)",
				got, sign, tamper, perr, status, answer)
		}
		if status == http.StatusOK && !authentic {
			t.Fatalf("unauthenticated delivery acknowledged: %s", answer)
		}
		if !wantEntry {
			return
		}
		if e := st.events[0]; e.ID != "msg_fuzz" || e.ContactID != ev.ContactID || !bytes.Equal(e.Body, sent) {
			t.Fatalf("inbox entry %+v does not hold the delivery", e)
		}
		if status2, answer2 := serve(r, h, sent); status2 != http.StatusOK || len(st.events) != 1 {
			t.Fatalf("second delivery: %d %s, inbox %d", status2, answer2, len(st.events))
		}
	})
}

func serve(r *Receiver, h http.Header, body []byte) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/workspace", bytes.NewReader(body))
	for k, vs := range h {
		req.Header[k] = vs
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

// parseSeeds are envelopes near the edges of what parse accepts.
func parseSeeds() [][]byte {
	at := "2026-03-30T12:00:00.000Z"
	return [][]byte{
		// The documented envelope (the service's webhook guide).
		[]byte(`{"id":"EVd1","object":"event","apiVersion":"v4","createdAt":"` + at + `","type":"contact.updated","data":{"object":{"id":"CT1","object":"contact","updatedAt":"` + at + `","defaultFields":{"firstName":"Ann"}}}}`),
		[]byte(`{"id":"EVd2","object":"event","apiVersion":"v4","createdAt":"` + at + `","type":"contact.deleted","data":{"object":{"id":"CT1","object":"contact","updatedAt":"` + at + `"}}}`),
		[]byte(`{"id":"EVd3","object":"event","type":"contact.updated","data":{"object":null,"resource":{"id":"CT1","updatedAt":"` + at + `"}}}`),
		[]byte(`{"id":"EVd4","object":"event","type":"contact.updated","data":{"payload":{"id":"CT1","updatedAt":"` + at + `"}}}`),
		// The older data.resource shape.
		[]byte(`{"id":"EV1","type":"contact.updated","data":{"resource":{"id":"CT1","updatedAt":"` + at + `","defaultFields":{"firstName":"Ann"}}}}`),
		[]byte(`{"id":"EV2","type":"contact.deleted","data":{"resource":{"id":"CT1","updatedAt":"` + at + `"}}}`),
		[]byte(`{"id":"EV3","type":"call.completed","data":{"object":{}}}`),
		[]byte(`{"id":" ","type":"contact.updated"}`),
		[]byte(`{"id":"EV4","type":"contact.updated","data":{"resource":{"id":"CT1","updatedAt":"yesterday"}}}`),
		[]byte(`{"id":"EV5","type":"contact.updated","data":{"resource":{"id":"CT1","updatedAt":"` + at + `","defaultFields":{"emails":"x"}}}}`),
		[]byte(`{"id":"EV6","type":"contact.updated","data":{"resource":[]}}`),
		[]byte(`[]`),
		[]byte(`null`),
	}
}

// memStore is an in-memory Store, for fuzzing without a file.
type memStore struct {
	mu     sync.Mutex
	secret string
	seen   map[string]bool
	events []state.InboxEvent
}

func (m *memStore) Secrets() (state.WebhookSecret, []state.WebhookSecret, error) {
	return state.WebhookSecret{WebhookID: "1", Secret: m.secret}, nil, nil
}

func (m *memStore) Enqueue(e state.InboxEvent) (uint64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	if m.seen[e.ID] {
		return 0, true, nil
	}
	m.seen[e.ID] = true
	m.events = append(m.events, e)
	return uint64(len(m.events)), false, nil
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
