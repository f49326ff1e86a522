package pipedriveemu

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func (s *Server) call(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	r, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
	r.Header.Set("x-api-token", s.Token())
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestAddWebhookValidation(t *testing.T) {
	s := NewServer(Options{})
	t.Cleanup(s.Close)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"v2 person", map[string]any{"subscription_url": "https://x.example.com/h", "event_action": "*", "event_object": "person", "version": "2.0"}, http.StatusCreated},
		{"v1 default", map[string]any{"subscription_url": "https://x.example.com/h", "event_action": "updated", "event_object": "person"}, http.StatusCreated},
		{"v1 action in v2", map[string]any{"subscription_url": "https://x.example.com/h", "event_action": "updated", "event_object": "person", "version": "2.0"}, http.StatusBadRequest},
		{"no URL", map[string]any{"event_action": "*", "event_object": "person"}, http.StatusBadRequest},
		{"no object", map[string]any{"subscription_url": "https://x.example.com/h", "event_action": "*"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if st, _ := s.call(t, http.MethodPost, "/v1/webhooks", tc.body); st != tc.status {
				t.Errorf("status %d, want %d", st, tc.status)
			}
		})
	}
	st, list := s.call(t, http.MethodGet, "/v1/webhooks", nil)
	data, _ := list["data"].([]any)
	if st != http.StatusOK || len(data) != 2 {
		t.Fatalf("list: %d, %v", st, list)
	}
	if pw := data[0].(map[string]any)["http_auth_password"]; pw != nil {
		t.Errorf("the password is listed back: %v", pw)
	}
}

type delivery struct {
	user, pass string
	body       map[string]any
}

// A change is delivered as a v2 POST with the Basic credentials; an
// answer other than 2xx is retried 3 times.
func TestWebhookDelivery(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		attempts int
	}{
		{"accepted", http.StatusOK, 1},
		{"refused, retried 3 times", http.StatusInternalServerError, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []delivery
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				u, p, _ := r.BasicAuth()
				b, _ := io.ReadAll(r.Body)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				mu.Lock()
				got = append(got, delivery{u, p, m})
				mu.Unlock()
				w.WriteHeader(tc.status)
			}))
			t.Cleanup(hook.Close)
			s := NewServer(Options{WebhookRetryScale: 0.001})
			t.Cleanup(s.Close)
			if st, _ := s.call(t, http.MethodPost, "/v1/webhooks", map[string]any{"subscription_url": hook.URL, "event_action": "*", "event_object": "person",
				"version": "2.0", "http_auth_user": "syncd", "http_auth_password": "pw-0123456789abcdef"}); st != http.StatusCreated {
				t.Fatalf("add webhook: %d", st)
			}
			id := s.Add(Person{Name: "Ada Lovelace"})
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= tc.attempts || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // no further attempt
			mu.Lock()
			defer mu.Unlock()
			if len(got) != tc.attempts {
				t.Fatalf("%d attempts, want %d", len(got), tc.attempts)
			}
			for i, d := range got {
				meta, _ := d.body["meta"].(map[string]any)
				if d.user != "syncd" || d.pass != "pw-0123456789abcdef" || meta["action"] != "create" || meta["entity"] != "person" ||
					meta["entity_id"] != id || meta["version"] != "2.0" || meta["attempt"] != float64(i+1) {
					t.Errorf("delivery %d: %+v", i, d)
				}
			}
		})
	}
}
