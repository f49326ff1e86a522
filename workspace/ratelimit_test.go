package workspace

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		value string
		want  time.Time
		ok    bool
	}{
		{"absent", "", time.Time{}, false},
		{"zero seconds", "0", now, true},
		{"seconds", "5", now.Add(5 * time.Second), true},
		{"seconds with spaces", " 7 ", now.Add(7 * time.Second), true},
		{"http date", "Mon, 30 Mar 2026 12:00:30 GMT", now.Add(30 * time.Second), true},
		{"http date in the past", "Mon, 30 Mar 2026 11:00:00 GMT", now.Add(-time.Hour), true},
		{"rfc 850 date", "Monday, 30-Mar-26 12:01:00 GMT", now.Add(time.Minute), true},
		{"negative", "-1", time.Time{}, false},
		{"fraction", "1.5", time.Time{}, false},
		{"garbage", "soon", time.Time{}, false},
		{"overflow", "99999999999999999999", time.Time{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.value, now)
			if ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestGate(t *testing.T) {
	var g gate
	start := time.Now()
	g.pauseUntil(start.Add(100 * time.Millisecond))
	g.pauseUntil(start.Add(50 * time.Millisecond)) // never shortens
	if got := g.pausedUntil(); !got.Equal(start.Add(100 * time.Millisecond)) {
		t.Fatalf("pausedUntil = %v", got.Sub(start))
	}
	time.AfterFunc(30*time.Millisecond, func() { g.pauseUntil(start.Add(200 * time.Millisecond)) }) // extended while waiting
	if err := g.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("wait returned after %v, before the extended pause ended", el)
	}
	g.pauseUntil(time.Now().Add(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.wait(ctx); err != context.DeadlineExceeded {
		t.Errorf("wait = %v, want the context's error", err)
	}
}

func TestDrainEmptiesTheBurst(t *testing.T) {
	l := rate.NewLimiter(1, 10)
	drain(l)
	if tok := l.Tokens(); tok >= 1 {
		t.Errorf("tokens after drain = %v, want < 1", tok)
	}
	drain(l) // nothing left: must not go into debt
	if tok := l.Tokens(); tok < -0.01 {
		t.Errorf("tokens after a second drain = %v, want no debt", tok)
	}
}

// TestRetryAfterPausesEveryCaller: one client gets 429 with Retry-After: 1;
// a second client of the same key, called afterwards, must not reach the
// service before that second has passed, and neither must the retry.
func TestRetryAfterPausesEveryCaller(t *testing.T) {
	var mu sync.Mutex
	hits := map[string][]time.Time{}
	var throttledAt time.Time
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		mu.Lock()
		hits[id] = append(hits[id], time.Now())
		first := id == "a" && len(hits[id]) == 1
		if first {
			throttledAt = time.Now()
		}
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			status(http.StatusTooManyRequests)(w, r)
			return
		}
		writeData(w, http.StatusOK, Contact{ID: id})
	}})

	saw429 := make(chan struct{})
	var once sync.Once
	optsA := testClientOptions(t, f.URL)
	optsA.Observer = func(ri RequestInfo) {
		if ri.Status == http.StatusTooManyRequests {
			once.Do(func() { close(saw429) })
		}
	}
	a := newTestClient(t, optsA)
	optsB := optsA // same base URL and key: the registry's limiter and gate
	optsB.Observer = nil
	b := newTestClient(t, optsB)
	if a.Limiter() != b.Limiter() {
		t.Fatal("clients of one key do not share a limiter")
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { _, errs[0] = a.GetContact(context.Background(), "a") })
	<-saw429
	wg.Go(func() { _, errs[1] = b.GetContact(context.Background(), "b") })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits["a"]) != 2 || len(hits["b"]) != 1 {
		t.Fatalf("hits a=%d b=%d, want 2 and 1", len(hits["a"]), len(hits["b"]))
	}
	const slack = 50 * time.Millisecond // Retry-After is counted from the client's reading of it
	if d := hits["b"][0].Sub(throttledAt); d < time.Second-slack {
		t.Errorf("second caller reached the service %v after the 429, want >= 1s", d)
	}
	if d := hits["a"][1].Sub(throttledAt); d < time.Second-slack {
		t.Errorf("retry reached the service %v after the 429, want >= 1s", d)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v, the pause should last about 1s", el)
	}
}

// TestRateLimitedWithoutRetryAfterSlowsOthers: a 429 without Retry-After
// closes the shared gate briefly and drains the saved-up burst.
func TestRateLimitedWithoutRetryAfterSlowsOthers(t *testing.T) {
	var mu sync.Mutex
	var throttledAt, otherAt time.Time
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.PathValue("id") == "b":
			otherAt = time.Now()
		case throttledAt.IsZero():
			throttledAt = time.Now()
			status(http.StatusTooManyRequests)(w, r)
			return
		}
		writeData(w, http.StatusOK, Contact{ID: r.PathValue("id")})
	}})
	saw429 := make(chan struct{})
	var once sync.Once
	opts := testClientOptions(t, f.URL)
	opts.RateLimit, opts.Burst = 10, 50 // slow refill: the drain stays visible
	opts.Observer = func(ri RequestInfo) {
		if ri.Status == http.StatusTooManyRequests {
			once.Do(func() { close(saw429) })
		}
	}
	c := newTestClient(t, opts)
	c.gatePause = 300 * time.Millisecond
	c.backoff = backoff{base: time.Millisecond, max: time.Millisecond}

	done := make(chan error, 1)
	go func() { _, err := c.GetContact(context.Background(), "a"); done <- err }()
	<-saw429
	if tok := c.Limiter().Tokens(); tok >= 1 {
		t.Errorf("limiter holds %v tokens after a 429, want its burst drained", tok)
	}
	if _, err := c.GetContact(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := otherAt.Sub(throttledAt); d < 250*time.Millisecond {
		t.Errorf("other caller reached the service %v after the 429, want the brief pause (300ms)", d)
	}
}

// TestLoadStaysUnderTheLimit is the load test against a fake
// service: 20 goroutines share one client for 4 s against a server that
// enforces a token bucket at the client's own limit (50/s, burst 10) and
// answers 429 over it. Almost no request may be refused, and throughput
// must reach 90% of the limit.
func TestLoadStaysUnderTheLimit(t *testing.T) {
	const (
		limit      = 50
		burst      = 10
		workers    = 20
		duration   = 4 * time.Second
		max429     = 5
		minPerSecs = 0.9 * limit
	)
	bucket := rate.NewLimiter(limit, burst) // the service's, created first
	var ok200, throttled atomic.Int64
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		if !bucket.Allow() {
			throttled.Add(1)
			status(http.StatusTooManyRequests)(w, r)
			return
		}
		ok200.Add(1)
		writeData(w, http.StatusOK, Contact{ID: r.PathValue("id")})
	}})
	opts := testClientOptions(t, f.URL)
	opts.RateLimit, opts.Burst = limit, burst
	opts.HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	c, err := NewClient(opts) // production backoff
	if err != nil {
		t.Fatal(err)
	}
	// Requests start only inside the window; the throughput is what the
	// server served over it.
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	var failures atomic.Int64
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				// A call may end early with DeadlineExceeded when its limiter
				// wait would outlast the test's context: not a failure.
				if _, err := c.GetContact(ctx, "c_1"); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					failures.Add(1)
					t.Logf("call failed: %v", err)
				}
			}
		})
	}
	wg.Wait()
	perSec := float64(ok200.Load()) / duration.Seconds()
	t.Logf("%d ok, %d throttled, %d failed calls in %v: %.1f/s (limit %d/s)", ok200.Load(), throttled.Load(), failures.Load(), duration, perSec, limit)
	if n := throttled.Load(); n > max429 {
		t.Errorf("%d requests throttled, want at most %d", n, max429)
	}
	if perSec < minPerSecs {
		t.Errorf("throughput %.1f/s, want at least %.1f/s", perSec, minPerSecs)
	}
	if failures.Load() != 0 {
		t.Errorf("%d calls failed", failures.Load())
	}
}

// TestRetryAfterOnServerError: a 503 with Retry-After delays the retry of
// that call only; other callers of the key are not held back.
func TestRetryAfterOnServerError(t *testing.T) {
	var mu sync.Mutex
	hits := map[string][]time.Time{}
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		mu.Lock()
		hits[id] = append(hits[id], time.Now())
		first := len(hits[id]) == 1
		mu.Unlock()
		if id == "a" && first {
			w.Header().Set("Retry-After", "1")
			status(http.StatusServiceUnavailable)(w, r)
			return
		}
		writeData(w, http.StatusOK, Contact{ID: id})
	}})
	saw503 := make(chan struct{})
	var once sync.Once
	opts := testClientOptions(t, f.URL)
	opts.Observer = func(ri RequestInfo) {
		if ri.Status == http.StatusServiceUnavailable {
			once.Do(func() { close(saw503) })
		}
	}
	c := newTestClient(t, opts)
	done := make(chan error, 1)
	go func() { _, err := c.GetContact(context.Background(), "a"); done <- err }()
	<-saw503
	start := time.Now()
	if _, err := c.GetContact(context.Background(), "b"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("another caller waited %v after a 503, want no shared pause", d)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits["a"]) != 2 {
		t.Fatalf("hits of a = %d, want 2", len(hits["a"]))
	}
	if d := hits["a"][1].Sub(hits["a"][0]); d < 950*time.Millisecond {
		t.Errorf("retry after %v, want the 503's Retry-After (1s)", d)
	}
}

// TestRetryAfterZeroFallsBackToBackoff: "Retry-After: 0" must not make
// the client retry at once; it backs off as without the header.
func TestRetryAfterZeroFallsBackToBackoff(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	f := newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			status(http.StatusTooManyRequests)(w, r)
			return
		}
		writeData(w, http.StatusOK, Contact{ID: "a"})
	}})
	c := newTestClient(t, testClientOptions(t, f.URL))
	c.gatePause = 150 * time.Millisecond
	if _, err := c.GetContact(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 || at[1].Sub(at[0]) < 140*time.Millisecond {
		t.Errorf("%d hits, retry after %v; want the brief shared pause", len(at), at[len(at)-1].Sub(at[0]))
	}
}
