package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// hit is one delivery the receiver got.
type hit struct {
	header http.Header
	body   []byte
	at     time.Time
	event  workspace.Event
}

// receiver is a webhook endpoint that records what it gets and answers
// with the status its answer function returns (200 when nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []hit
	answer func(n int, h hit) int // n counts hits from 1
}

func newReceiver(t *testing.T, answer func(n int, h hit) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := hit{header: r.Header.Clone(), body: body, at: time.Now()}
		if err := json.Unmarshal(body, &h.event); err != nil {
			t.Errorf("delivery body is not an event: %s", body)
		}
		rc.mu.Lock()
		rc.hits = append(rc.hits, h)
		n := len(rc.hits)
		rc.mu.Unlock()
		status := http.StatusOK
		if rc.answer != nil {
			status = rc.answer(n, h)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit{}, rc.hits...)
}

func (rc *receiver) wait(t *testing.T, n int) []hit {
	t.Helper()
	eventually(t, 5*time.Second, "deliveries", func() bool { return len(rc.got()) >= n })
	return rc.got()
}

// resourceOf decodes the contact an event carries in data.object, where
// the service's webhook guide puts it (the emulator's default).
func resourceOf(t *testing.T, ev workspace.Event) workspace.Contact {
	t.Helper()
	if len(ev.Data.Resource) != 0 {
		t.Errorf("event %s carries data.resource beside data.object", ev.ID)
	}
	var c workspace.Contact
	if err := json.Unmarshal(ev.Data.Object, &c); err != nil {
		t.Fatalf("data.object: %v", err)
	}
	return c
}

func history(t *testing.T, base, id string) []workspace.Delivery {
	t.Helper()
	return data[[]workspace.Delivery](t, call(t, base, "GET", "/webhooks/"+id+"/events", nil), http.StatusOK)
}

func TestDeliverySignedAndRecorded(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newServer(t, emulator.Options{})
	wh := createWebhook(t, s.URL, contactHook(rc.URL))
	other := newReceiver(t, nil)
	createWebhook(t, s.URL, map[string]any{"url": other.URL, "events": []string{"message.received"}})
	off := newReceiver(t, nil)
	createWebhook(t, s.URL, map[string]any{"url": off.URL, "events": []string{"contact.updated"}, "status": "disabled"})

	c := createContact(t, s.URL, person("Ada", map[string]any{"externalId": "x1"}))
	call(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, map[string]any{"defaultFields": map[string]any{"lastName": "L"}})
	call(t, s.URL, "PATCH", "/_emulator/app/contacts/"+c.ID, map[string]any{"defaultFields": map[string]any{"role": "Boss"}})
	call(t, s.URL, "DELETE", "/v1/contacts/"+c.ID, nil)
	hits := rc.wait(t, 4)

	v := &signature.Verifier{Secrets: []string{wh.Key}}
	wantTypes := []string{"contact.updated", "contact.updated", "contact.updated", "contact.deleted"}
	var lastUpdated time.Time
	for i, h := range hits {
		if err := v.Verify(h.header, h.body); err != nil {
			t.Errorf("delivery %d does not verify: %v", i, err)
		}
		if h.header.Get("webhook-id") != h.event.ID || h.event.ID == "" {
			t.Errorf("webhook-id %q, event id %q", h.header.Get("webhook-id"), h.event.ID)
		}
		if h.event.Type != wantTypes[i] || h.event.APIVersion != versionValue || h.event.CreatedAt.IsZero() {
			t.Errorf("delivery %d: %+v, want type %s", i, h.event, wantTypes[i])
		}
		rc := resourceOf(t, h.event)
		if rc.ID != c.ID || *rc.ExternalID != "x1" {
			t.Errorf("delivery %d resource = %+v", i, rc)
		}
		if !rc.UpdatedAt.After(lastUpdated) && i < 3 {
			t.Errorf("delivery %d updatedAt %v not after %v", i, rc.UpdatedAt, lastUpdated)
		}
		lastUpdated = rc.UpdatedAt
	}
	if r := resourceOf(t, hits[2].event); r.DefaultFields.Role == nil || *r.DefaultFields.Role != "Boss" {
		t.Errorf("the app's edit was not delivered: %+v", r.DefaultFields)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(other.got()) + len(off.got()); n != 0 {
		t.Errorf("%d deliveries to a message webhook or a disabled one", n)
	}
	eventually(t, 2*time.Second, "history", func() bool {
		hs := history(t, s.URL, wh.ID)
		return len(hs) == 4 && hs[3].Status == emulator.DeliveryDelivered
	})
	for i, d := range history(t, s.URL, wh.ID) {
		if d.Status != emulator.DeliveryDelivered || d.Attempts != 1 || d.ResponseStatus != 200 || d.EventID != hits[i].event.ID || d.Type != wantTypes[i] || d.WebhookID != wh.ID {
			t.Errorf("history %d = %+v", i, d)
		}
	}
}

func TestDeliveryRetries(t *testing.T) {
	rc := newReceiver(t, func(n int, _ hit) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	s := newServer(t, emulator.Options{RetryBase: 30 * time.Millisecond})
	wh := createWebhook(t, s.URL, contactHook(rc.URL))
	createContact(t, s.URL, person("Ada", nil))
	hits := rc.wait(t, 3)
	v := &signature.Verifier{Secrets: []string{wh.Key}}
	for i, h := range hits {
		if err := v.Verify(h.header, h.body); err != nil || h.header.Get("webhook-id") != hits[0].header.Get("webhook-id") {
			t.Errorf("attempt %d: verify %v, webhook-id %q", i, err, h.header.Get("webhook-id"))
		}
	}
	if d1, d2 := hits[1].at.Sub(hits[0].at), hits[2].at.Sub(hits[1].at); d1 < 30*time.Millisecond || d2 < 60*time.Millisecond {
		t.Errorf("waits %v, %v: want at least 30ms then 60ms (doubling)", d1, d2)
	}
	eventually(t, 2*time.Second, "delivered", func() bool {
		hs := history(t, s.URL, wh.ID)
		return len(hs) == 1 && hs[0].Status == emulator.DeliveryDelivered
	})
	if d := history(t, s.URL, wh.ID)[0]; d.Attempts != 3 || d.ResponseStatus != 204 || d.NextAttemptAt != nil {
		t.Errorf("history = %+v", d)
	}
}

func TestDeliveryGivesUpThenManualRetry(t *testing.T) {
	var fixed sync.Mutex
	ok := false
	rc := newReceiver(t, func(int, hit) int {
		fixed.Lock()
		defer fixed.Unlock()
		if ok {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	s := newServer(t, emulator.Options{RetryBase: 5 * time.Millisecond, MaxAttempts: 3})
	wh := createWebhook(t, s.URL, contactHook(rc.URL))
	createContact(t, s.URL, person("Ada", nil))
	eventually(t, 2*time.Second, "failed for good", func() bool {
		hs := history(t, s.URL, wh.ID)
		return len(hs) == 1 && hs[0].Status == emulator.DeliveryFailed
	})
	d := history(t, s.URL, wh.ID)[0]
	if d.Attempts != 3 || d.ResponseStatus != 503 || !strings.Contains(d.LastError, "503") || len(rc.got()) != 3 {
		t.Fatalf("after giving up: %+v, %d hits", d, len(rc.got()))
	}
	fixed.Lock()
	ok = true
	fixed.Unlock()
	errorBody(t, call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/events/EVnope/retry", nil), http.StatusNotFound)
	retried := data[workspace.Delivery](t, call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/events/"+d.EventID+"/retry", nil), http.StatusOK)
	if retried.ID != d.ID {
		t.Errorf("retry answered delivery %s, want %s", retried.ID, d.ID)
	}
	eventually(t, 2*time.Second, "delivered after retry", func() bool {
		return history(t, s.URL, wh.ID)[0].Status == emulator.DeliveryDelivered
	})
	if d := history(t, s.URL, wh.ID)[0]; d.Attempts != 4 {
		t.Errorf("attempts = %d, want 4", d.Attempts)
	}
	// Retry by delivery id works too.
	call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/events/"+d.ID+"/retry", nil)
	rc.wait(t, 5)
}

func TestDeliveryTransportError(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s := newServer(t, emulator.Options{RetryBase: 5 * time.Millisecond, MaxAttempts: 2})
	wh := createWebhook(t, s.URL, contactHook(url))
	createContact(t, s.URL, person("Ada", nil))
	eventually(t, 2*time.Second, "failed", func() bool {
		hs := history(t, s.URL, wh.ID)
		return len(hs) == 1 && hs[0].Status == emulator.DeliveryFailed
	})
	if d := history(t, s.URL, wh.ID)[0]; d.Attempts != 2 || d.ResponseStatus != 0 || d.LastError == "" {
		t.Errorf("history = %+v", d)
	}
}

// TestDeliveryOrder: first attempts to one webhook follow the order of the
// changes.
func TestDeliveryOrder(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newServer(t, emulator.Options{})
	createWebhook(t, s.URL, contactHook(rc.URL))
	var want []string
	for i := 0; i < 20; i++ {
		want = append(want, createContact(t, s.URL, person("P", nil)).ID)
	}
	for i, h := range rc.wait(t, 20) {
		if id := resourceOf(t, h.event).ID; id != want[i] {
			t.Fatalf("delivery %d is about %s, want %s", i, id, want[i])
		}
	}
}

func TestDeliveryAfterRotation(t *testing.T) {
	rc := newReceiver(t, nil)
	var skew atomic.Int64 // the emulator's clock runs ahead of the real one by this
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s := newServer(t, emulator.Options{RotationGrace: time.Minute, Now: clock})
	wh := createWebhook(t, s.URL, contactHook(rc.URL))
	key := data[workspace.SigningSecret](t, call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/rotate", nil), http.StatusOK).Key
	createContact(t, s.URL, person("During grace", nil))
	h := rc.wait(t, 1)[0]
	if n := len(strings.Fields(h.header.Get("webhook-signature"))); n != 2 {
		t.Fatalf("%d signatures during the grace period, want 2", n)
	}
	for i, secret := range []string{wh.Key, key} {
		if err := (&signature.Verifier{Secrets: []string{secret}}).Verify(h.header, h.body); err != nil {
			t.Errorf("secret %d does not verify during the grace period: %v", i, err)
		}
	}
	skew.Store(int64(2 * time.Minute))
	createContact(t, s.URL, person("After grace", nil))
	h = rc.wait(t, 2)[1]
	if n := len(strings.Fields(h.header.Get("webhook-signature"))); n != 1 {
		t.Errorf("%d signatures after the grace period, want 1", n)
	}
	v := &signature.Verifier{Secrets: []string{key}, Now: clock}
	if err := v.Verify(h.header, h.body); err != nil {
		t.Errorf("new secret after the grace period: %v", err)
	}
	v.Secrets = []string{wh.Key}
	if err := v.Verify(h.header, h.body); err == nil {
		t.Error("old secret still signs after the grace period")
	}
}

func TestTestEventAndLegacySignature(t *testing.T) {
	rc := newReceiver(t, nil)
	s := newServer(t, emulator.Options{LegacySignature: true})
	wh := createWebhook(t, s.URL, contactHook(rc.URL))
	d := data[workspace.Delivery](t, call(t, s.URL, "POST", "/webhooks/"+wh.ID+"/events/test", nil), http.StatusOK)
	h := rc.wait(t, 1)[0]
	if h.event.Type != "contact.updated" || resourceOf(t, h.event).ID != "test" || h.event.ID != d.EventID {
		t.Errorf("test event = %+v (delivery %+v)", h.event, d)
	}
	legacy := http.Header{"Openphone-Signature": h.header.Values("Openphone-Signature")}
	if err := (&signature.Verifier{Secrets: []string{wh.Key}, Legacy: true}).Verify(legacy, h.body); err != nil {
		t.Errorf("legacy signature: %v (%v)", err, legacy)
	}
}

// TestCloseStopsDeliveries: Close returns promptly with retries pending,
// and nothing is delivered afterwards.
func TestCloseStopsDeliveries(t *testing.T) {
	rc := newReceiver(t, func(int, hit) int { return http.StatusInternalServerError })
	s := emulator.NewServer(emulator.Options{APIKey: testKey, Rate: -1, RetryBase: 50 * time.Millisecond})
	createWebhook(t, s.URL, contactHook(rc.URL))
	for i := 0; i < 5; i++ {
		createContact(t, s.URL, person("P", nil))
	}
	rc.wait(t, 5)
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	// An attempt in flight at Close may still reach the receiver's
	// handler; after that, no retry may follow.
	time.Sleep(30 * time.Millisecond)
	n := len(rc.got())
	time.Sleep(200 * time.Millisecond)
	if m := len(rc.got()); m != n {
		t.Errorf("%d deliveries after Close", m-n)
	}
}
