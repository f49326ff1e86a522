package workspace

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// This file holds the test doubles of the client's tests: a fake API
// server whose handlers are registered by route template (the Route*
// constants are valid http.ServeMux patterns), counting hits per route and
// recording every request, and a client tuned for tests.

// recorded is one request as the fake server saw it.
type recorded struct {
	Route  string // the ServeMux pattern that matched
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	At     time.Time
}

// fakeAPI is an httptest server with per-route handlers and counters.
type fakeAPI struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
	reqs []recorded
}

// newFakeAPI starts a server serving routes (route template -> handler).
// Requests to other routes answer 404 with a spec-shaped body.
func newFakeAPI(t testing.TB, routes map[string]http.HandlerFunc) *fakeAPI {
	t.Helper()
	f := &fakeAPI{hits: map[string]int{}}
	mux := http.NewServeMux()
	for route, h := range routes {
		mux.HandleFunc(route, h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, ErrorBody{Message: "no route " + r.Method + " " + r.URL.Path, Title: "Not Found"})
	})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, pattern := mux.Handler(r)
		f.mu.Lock()
		f.hits[pattern]++
		f.reqs = append(f.reqs, recorded{
			Route: pattern, Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(),
			Header: r.Header.Clone(), Body: body, At: time.Now(),
		})
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Hits returns how many requests route received.
func (f *fakeAPI) Hits(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[route]
}

// TotalHits returns how many requests the server received.
func (f *fakeAPI) TotalHits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// Requests returns a copy of the recorded requests, oldest first.
func (f *fakeAPI) Requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeData answers status with {data: v}.
func writeData(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, map[string]any{"data": v})
}

// hangUp hijacks the connection and closes it without answering: the
// request arrived (and, for a write, may have been applied), the answer
// is lost.
func hangUp(t testing.TB, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("response writer cannot hijack")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

// sequence returns a handler answering the i-th request with steps[i]
// (the last step repeats).
func sequence(steps ...http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := min(n, len(steps)-1)
		n++
		mu.Unlock()
		steps[i](w, r)
	}
}

// status answers code with a spec-shaped error body.
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, code, ErrorBody{Message: http.StatusText(code), Title: http.StatusText(code), Status: code})
	}
}

// uniqueKey returns an API key no other test uses, so that tests do not
// share a limiter through the registry unless they mean to.
func uniqueKey(t testing.TB) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "test-key-" + hex.EncodeToString(b)
}

// testClientOptions are options for a client of baseURL: a unique key, a
// generous limit (tests of the limiter set their own), no keep-alives (so
// that net/http never replays a request on its own and hit counts are
// exact), and logs to the test.
func testClientOptions(t testing.TB, baseURL string) ClientOptions {
	log := logrus.New()
	log.SetOutput(testWriter{t})
	log.SetLevel(logrus.DebugLevel)
	return ClientOptions{
		BaseURL:    baseURL,
		APIKey:     uniqueKey(t),
		RateLimit:  1000,
		Burst:      100,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		Log:        logrus.NewEntry(log),
		// The fakes serve the spec's form, as if state remembered it: the
		// finding out is tested on its own (client_fallback_test.go).
		WebhookRoutes: WebhookRoutesSpec,
	}
}

// newTestClient builds a client from opts with fast backoff (retries in
// milliseconds rather than seconds).
func newTestClient(t testing.TB, opts ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(opts)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	c.backoff = backoff{base: time.Millisecond, max: 5 * time.Millisecond}
	c.gatePause = time.Millisecond
	return c
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}
