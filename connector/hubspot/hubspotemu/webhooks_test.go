package hubspotemu

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// receiver records the requests it gets and answers each with the next
// of statuses (the last one repeated).
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      [][]Event
	headers  []http.Header
	bodies   [][]byte
	queries  []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var evs []Event
	_ = json.Unmarshal(body, &evs)
	rc.mu.Lock()
	rc.got, rc.headers, rc.bodies = append(rc.got, evs), append(rc.headers, r.Header.Clone()), append(rc.bodies, body)
	rc.queries = append(rc.queries, r.URL.RawQuery)
	st := rc.statuses[min(len(rc.got)-1, len(rc.statuses)-1)]
	rc.mu.Unlock()
	w.WriteHeader(st)
}

// newHook serves rc and returns its URL.
func newHook(t *testing.T, rc *receiver) string {
	t.Helper()
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	return hook.URL
}

func (rc *receiver) requests() int { rc.mu.Lock(); defer rc.mu.Unlock(); return len(rc.got) }

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWebhookDeliveries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []int
		requests int // requests for one change
	}{
		{"accepted", []int{200}, 1},
		{"5xx retried", []int{500, 503, 204}, 3},
		{"401 not retried", []int{401}, 1},
		{"404 not retried", []int{404}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := &receiver{statuses: tc.statuses}
			hook := httptest.NewServer(rc)
			t.Cleanup(hook.Close)
			s := NewServer(Options{})
			t.Cleanup(s.Close)
			s.SetWebhooks(&WebhookTarget{URL: hook.URL + "/hook", ClientSecret: "secret", AppID: 1, PortalID: 2, RetryScale: 0.0001})
			id := s.Add(map[string]string{"email": "a@example.com"})
			waitFor(t, "the deliveries", func() bool { return rc.requests() >= tc.requests })
			time.Sleep(100 * time.Millisecond) // no further attempt
			if got := rc.requests(); got != tc.requests {
				t.Fatalf("%d requests, want %d", got, tc.requests)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			for i, evs := range rc.got {
				if len(evs) != 1 || evs[0].SubscriptionType != "contact.creation" || evs[0].AttemptNumber != i || evs[0].PortalID != 2 {
					t.Errorf("request %d: events %+v", i, evs)
				}
				h := rc.headers[i]
				want := SignatureV3("secret", http.MethodPost, hook.URL+"/hook", rc.bodies[i], h.Get("X-HubSpot-Request-Timestamp"))
				if h.Get("X-HubSpot-Signature-v3") != want || h.Get("X-HubSpot-Signature-Version") != "v1" || h.Get("X-HubSpot-Signature") == "" {
					t.Errorf("request %d: headers %v", i, h)
				}
			}
			_ = id
		})
	}
}

// 250 changes go out in requests of at most 100 events, every change
// once, property changes naming the property.
func TestWebhookBatches(t *testing.T) {
	rc := &receiver{statuses: []int{200}}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	s := NewServer(Options{})
	t.Cleanup(s.Close)
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = s.Add(map[string]string{"email": "a@example.com", "lastname": "Before"})
	}
	s.SetWebhooks(&WebhookTarget{URL: hook.URL, ClientSecret: "secret"})
	for _, id := range ids {
		if err := s.Update(id, map[string]string{"lastname": "After"}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		n := 0
		for _, evs := range rc.got {
			n += len(evs)
		}
		return n
	}
	waitFor(t, "250 events", func() bool { return count() == 250 })
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, evs := range rc.got {
		if len(evs) > 100 {
			t.Errorf("request %d holds %d events, over 100", i, len(evs))
		}
		for _, e := range evs {
			if e.SubscriptionType != "contact.propertyChange" || e.PropertyName != "lastname" || e.PropertyValue != "After" {
				t.Errorf("event %+v", e)
			}
		}
	}
}
