package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"
)

// server answers with steps in order, the last one repeating, and counts
// the requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, steps ...http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.hits.Add(1))
		steps[min(n, len(steps))-1](w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func withHeader(k, v string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.Header().Set(k, v); h(w, r) }
}

// hangUp closes the connection without an answer: the request arrived.
func hangUp(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// sleeps records the client's waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func quietLog() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

func testOptions(url string, sl *sleeps) Options {
	return Options{
		Name: "test api", BaseURL: url, Log: quietLog(), Sleep: sl.sleep,
		Backoff: Backoff{Base: 100 * time.Millisecond, Max: time.Second}.Delay,
		Budget:  Budget{Retries: 3, Waits: 3},
	}
}

func TestLoopRules(t *testing.T) {
	ok := answer(200, `{"id":"1"}`)
	get := Request{Method: "GET", Path: "/x", Idempotent: true}
	post := Request{Method: "POST", Path: "/x", Body: map[string]string{"a": "b"}}
	tests := []struct {
		name       string
		req        Request
		steps      []http.HandlerFunc
		budget     Budget
		wantHits   int64
		wantErr    bool
		unknown    bool
		wantSleeps []time.Duration
	}{
		{name: "ok", req: get, steps: []http.HandlerFunc{ok}, wantHits: 1},
		{name: "get 500 retried with backoff", req: get, steps: []http.HandlerFunc{answer(500, ""), answer(502, ""), ok},
			wantHits: 3, wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "get 500 gives up after the budget", req: get, steps: []http.HandlerFunc{answer(500, "")},
			wantHits: 4, wantErr: true, wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "503 Retry-After longer than the backoff", req: get, steps: []http.HandlerFunc{withHeader("Retry-After", "3", answer(503, "")), ok},
			wantHits: 2, wantSleeps: []time.Duration{3 * time.Second}},
		{name: "post 500 outcome unknown", req: post, steps: []http.HandlerFunc{answer(500, ""), ok},
			wantHits: 1, wantErr: true, unknown: true},
		{name: "post answer lost outcome unknown", req: post, steps: []http.HandlerFunc{hangUp, ok},
			wantHits: 1, wantErr: true, unknown: true},
		{name: "post undecodable answer outcome unknown", req: post, steps: []http.HandlerFunc{answer(201, "<html>")},
			wantHits: 1, wantErr: true, unknown: true},
		{name: "get undecodable answer fails, not unknown", req: get, steps: []http.HandlerFunc{answer(200, "<html>")},
			wantHits: 1, wantErr: true},
		{name: "get answer lost retried", req: get, steps: []http.HandlerFunc{hangUp, ok},
			wantHits: 2, wantSleeps: []time.Duration{100 * time.Millisecond}},
		{name: "post 429 retried", req: post, steps: []http.HandlerFunc{answer(429, ""), ok},
			wantHits: 2, wantSleeps: []time.Duration{100 * time.Millisecond}},
		{name: "429 forever gives up after the waits", req: post, steps: []http.HandlerFunc{answer(429, "")},
			wantHits: 4, wantErr: true, wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "shared budget counts waits and retries together", req: get, budget: Budget{Retries: 2, Shared: true},
			steps: []http.HandlerFunc{answer(429, ""), answer(500, "")}, wantHits: 3, wantErr: true,
			wantSleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{name: "404 fails at once", req: get, steps: []http.HandlerFunc{answer(404, `{"message":"gone"}`)}, wantHits: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.steps...)
			var sl sleeps
			opts := testOptions(srv.URL, &sl)
			if tc.budget != (Budget{}) {
				opts.Budget = tc.budget
			}
			c := New(opts)
			var out struct{ ID string }
			_, err := c.Do(context.Background(), tc.req, &out)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := errors.Is(err, ErrOutcomeUnknown); got != tc.unknown {
				t.Errorf("outcome unknown = %v, want %v (%v)", got, tc.unknown, err)
			}
			if !tc.wantErr && out.ID != "1" {
				t.Errorf("decoded %+v", out)
			}
			if got := srv.hits.Load(); got != tc.wantHits {
				t.Errorf("hits = %d, want %d", got, tc.wantHits)
			}
			if c.Calls() != tc.wantHits {
				t.Errorf("Calls() = %d, want %d", c.Calls(), tc.wantHits)
			}
			if len(sl.d) != len(tc.wantSleeps) {
				t.Fatalf("slept %v, want %v", sl.d, tc.wantSleeps)
			}
			for i, d := range sl.d {
				// The Retry-After is counted from the client's reading of it.
				if w := tc.wantSleeps[i]; d > w || d < w-50*time.Millisecond {
					t.Errorf("sleep %d = %v, want %v", i, d, w)
				}
			}
		})
	}
}

func TestFailedDialIsRetriedEvenForAPost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var sl sleeps
	var infos []Info
	opts := testOptions("http://"+addr, &sl)
	opts.Observer = func(i Info) { infos = append(infos, i) }
	_, err = New(opts).Do(context.Background(), Request{Method: "POST", Path: "/x", Body: 1}, nil)
	var te *TransportError
	if !errors.As(err, &te) || errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want a transport error with a known outcome", err)
	}
	if len(infos) != 4 || len(sl.d) != 3 {
		t.Fatalf("%d attempts and sleeps %v, want 4 attempts", len(infos), sl.d)
	}
	for i, in := range infos {
		if in.Status != 0 || in.Err == nil || in.Attempt != i+1 || in.Route != "POST /x" || in.Method != "POST" {
			t.Errorf("attempt %d: %+v", i+1, in)
		}
	}
}

func TestObserverAndOnAnswerSeeEveryAttempt(t *testing.T) {
	srv := newServer(t, withHeader("X-RateLimit-Remaining", "0", answer(429, "")), answer(502, ""),
		withHeader("X-RateLimit-Remaining", "41", answer(200, `{}`)))
	var sl sleeps
	var infos []Info
	var remaining []string
	opts := testOptions(srv.URL, &sl)
	opts.Observer = func(i Info) { infos = append(infos, i) }
	opts.OnAnswer = func(a Answer) { remaining = append(remaining, a.Header.Get("X-RateLimit-Remaining")) }
	if _, err := New(opts).Do(context.Background(), Request{Method: "PATCH", Path: "/x", Route: "PATCH /x/{id}", Idempotent: true}, &struct{}{}); err != nil {
		t.Fatal(err)
	}
	want := []int{429, 502, 200}
	if len(infos) != len(want) {
		t.Fatalf("observed %+v", infos)
	}
	for i, in := range infos {
		if in.Status != want[i] || (in.Err != nil) != (want[i] != 200) || in.Attempt != i+1 || in.Route != "PATCH /x/{id}" || in.Duration <= 0 {
			t.Errorf("attempt %d: %+v", i+1, in)
		}
	}
	if strings.Join(remaining, ",") != "0,,41" {
		t.Errorf("OnAnswer saw %q", remaining)
	}
}

// TestRetryAfterPausesEveryCaller: a 429 with Retry-After closes the gate
// of the limiter, so another client of the same limiter waits too.
func TestRetryAfterPausesEveryCaller(t *testing.T) {
	var first atomic.Bool
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			withHeader("Retry-After", "1", answer(429, ""))(w, r)
			return
		}
		answer(200, `{}`)(w, r)
	})
	l := rate.NewLimiter(1000, 10)
	opts := Options{Name: "test", BaseURL: srv.URL, Limiter: l, Log: quietLog()}
	a, b := New(opts), New(opts)
	if a.Gate() != b.Gate() {
		t.Fatal("clients of one limiter have different gates")
	}
	start := time.Now()
	if _, err := a.Do(context.Background(), Request{Method: "GET", Path: "/a", Idempotent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 950*time.Millisecond {
		t.Errorf("retry after %v, want the Retry-After", d)
	}
	a.Gate().PauseUntil(time.Now().Add(300 * time.Millisecond)) // as another 429 would
	start = time.Now()
	if _, err := b.Do(context.Background(), Request{Method: "GET", Path: "/b", Idempotent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 280*time.Millisecond {
		t.Errorf("the other client went through after %v, before the pause ended", d)
	}
}

func TestThrottledWithoutRetryAfterDrainsAndPausesBriefly(t *testing.T) {
	srv := newServer(t, answer(429, ""), answer(200, `{}`))
	l := rate.NewLimiter(10, 50)
	var sl sleeps
	opts := testOptions(srv.URL, &sl)
	var c *Client
	var tokens float64
	var pausedFor time.Duration
	opts.Limiter = l
	opts.Observer = func(i Info) {
		if i.Status == 429 {
			tokens, pausedFor = l.Tokens(), time.Until(c.Gate().PausedUntil())
		}
	}
	c = New(opts)
	if _, err := c.Do(context.Background(), Request{Method: "GET", Path: "/", Idempotent: true}, nil); err != nil {
		t.Fatal(err)
	}
	if tokens >= 1 {
		t.Errorf("limiter holds %v tokens after a 429, want its burst drained", tokens)
	}
	if pausedFor < 200*time.Millisecond || pausedFor > 250*time.Millisecond {
		t.Errorf("gate paused for %v after a 429, want the brief pause (250ms)", pausedFor)
	}
	if len(sl.d) != 1 {
		t.Errorf("slept %v, want one backoff", sl.d)
	}
}

func TestContextEndsTheCall(t *testing.T) {
	block := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	for _, tc := range []struct {
		name    string
		req     Request
		unknown bool
	}{
		{"get", Request{Method: "GET", Path: "/", Idempotent: true}, false},
		{"post", Request{Method: "POST", Path: "/"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, block)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := New(Options{Name: "test", BaseURL: srv.URL, Log: quietLog()}).Do(ctx, tc.req, nil)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOutcomeUnknown) != tc.unknown {
				t.Errorf("err = %v, want the context's error, outcome unknown %v", err, tc.unknown)
			}
		})
	}
}

func TestAttemptTimeoutAndBodyLimit(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}
	srv := newServer(t, slow, answer(200, `{"id":"`+strings.Repeat("x", 100)+`"}`))
	var sl sleeps
	opts := testOptions(srv.URL, &sl)
	opts.AttemptTimeout, opts.MaxBody = 50*time.Millisecond, 20
	var out struct{ ID string }
	_, err := New(opts).Do(context.Background(), Request{Method: "GET", Path: "/", Idempotent: true}, &out)
	if err == nil || !strings.Contains(err.Error(), "decode 200 answer") {
		t.Fatalf("err = %v, want the cut answer undecodable", err)
	}
	if srv.hits.Load() != 2 || len(sl.d) != 1 {
		t.Errorf("%d hits, sleeps %v: want the slow attempt timed out and retried", srv.hits.Load(), sl.d)
	}
}
