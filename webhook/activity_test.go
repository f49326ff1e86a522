package webhook

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestActivityEventsQueued: a call or message event of a type the
// activity direction takes goes to the activity queue (not the inbox)
// before the 2xx, a redelivery is a duplicate, an activity type not
// configured is dropped, a bad signature is refused with nothing queued,
// and the text never reaches the log.
func TestActivityEventsQueued(t *testing.T) {
	woken := 0
	f := newFixture(t, nil)
	opts := f.recv.opts
	opts.Activities, opts.ActivityTypes, opts.ActivityAccepted = f.store.Activities, []string{"message.received"}, func() { woken++ }
	recv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.recv, f.srv = recv, httptest.NewServer(recv)
	t.Cleanup(f.srv.Close)
	putSecret(t, f.store, secret, now, time.Time{})
	body := []byte(`{"id":"EVm1","object":"event","apiVersion":"v1","createdAt":"2026-03-30T12:00:00.000Z","type":"message.received",` +
		`"data":{"object":{"id":"AM1","object":"message","from":"+15550001111","to":["+15550100100"],"text":"my secret words","direction":"incoming","phoneNumberId":"PN1","status":"received","createdAt":"2026-03-30T12:00:00.000Z","updatedAt":"2026-03-30T12:00:00.000Z"}}}`)
	for i := range 2 {
		status, ans := f.post(t, signed(t, secret, "msg_m1", now, body), body)
		want := "accepted"
		if i == 1 {
			want = "duplicate"
		}
		if status != 200 || !strings.Contains(ans, want) {
			t.Fatalf("delivery %d: %d %s, want %s", i, status, ans, want)
		}
	}
	evs, err := f.store.Activities.Pending(0)
	if err != nil || len(evs) != 1 || evs[0].Type != "message.received" || string(evs[0].Body) != string(body) {
		t.Fatalf("activity queue = %+v, %v", evs, err)
	}
	if len(f.inbox(t)) != 0 {
		t.Error("an activity event reached the contact inbox")
	}
	if woken != 1 {
		t.Errorf("activity direction woken %d times, want 1", woken)
	}
	other := []byte(strings.Replace(string(body), `"type":"message.received"`, `"type":"message.delivered"`, 1))
	if status, ans := f.post(t, signed(t, secret, "msg_m2", now, other), other); status != 200 || !strings.Contains(ans, "ignored") {
		t.Errorf("an activity type not configured: %d %s, want ignored", status, ans)
	}
	if status, _ := f.post(t, signed(t, otherKey, "msg_m3", now, body), body); status != 401 {
		t.Errorf("a bad signature: %d, want 401", status)
	}
	if n, _ := f.store.Activities.CountPending(); n != 1 {
		t.Errorf("%d events queued, want 1", n)
	}
	if strings.Contains(f.logs.String(), "secret words") {
		t.Error("a message's text reached the log")
	}
}
