package workspace

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

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
	f := newBucketAPI(t, limit, burst) // the service's, created first
	ok200, throttled := &f.served, &f.throttled
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

// TestFirstBurstAfterAnotherProcess: the service's bucket was spent just
// before this process started (the previous run, a restart). A new
// client at the service's own limit and burst must not cause a 429 with
// its first requests: its limiter starts empty and refills in step with
// the service's bucket.
func TestFirstBurstAfterAnotherProcess(t *testing.T) {
	const limit, burst, calls = 50, 10, 30
	f := newBucketAPI(t, limit, burst)
	throttled := &f.throttled
	f.bucket.AllowN(time.Now(), burst) // the earlier process spent it
	opts := testClientOptions(t, f.URL)
	opts.RateLimit, opts.Burst = limit, burst
	opts.HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: calls}}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := c.GetContact(context.Background(), "c_1"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := throttled.Load(); n != 0 {
		t.Fatalf("%d of the first %d requests answered 429, want none", n, calls)
	}
}

// jitterTransport delays each request by a random time before sending
// it, as scheduling, the network and the service's queue do between the
// client's token and the service's count.
type jitterTransport struct {
	next http.RoundTripper
	max  time.Duration
}

func (j jitterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	time.Sleep(rand.N(j.max))
	return j.next.RoundTrip(r)
}

// TestJitterCausesNo429: requests in groups with idle moments between
// them (the client's bucket fills up), each delayed by up to 60 ms of
// jitter on its way, against a service whose bucket matches the client's
// settings: none may be refused.
func TestJitterCausesNo429(t *testing.T) {
	const limit, burst = 100, 10
	f := newBucketAPI(t, limit, burst)
	throttled, served := &f.throttled, &f.served
	opts := testClientOptions(t, f.URL)
	opts.RateLimit, opts.Burst = limit, burst
	opts.HTTPClient = &http.Client{Timeout: 10 * time.Second,
		Transport: jitterTransport{next: &http.Transport{MaxIdleConnsPerHost: 8}, max: 60 * time.Millisecond}}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 5 {
					if _, err := c.GetContact(context.Background(), "c_1"); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(150 * time.Millisecond) // idle: the buckets fill up
	}
	if n := throttled.Load(); n != 0 {
		t.Fatalf("%d of %d requests answered 429, want none", n, served.Load()+n)
	}
}

// bucketAPI is a fake service that enforces a token bucket (the limit and
// burst of the test) on GetContact and answers 429 over it.
type bucketAPI struct {
	*fakeAPI
	bucket            *rate.Limiter
	served, throttled atomic.Int64
}

func newBucketAPI(t *testing.T, limit rate.Limit, burst int) *bucketAPI {
	b := &bucketAPI{bucket: rate.NewLimiter(limit, burst)}
	b.fakeAPI = newFakeAPI(t, map[string]http.HandlerFunc{RouteGetContact: func(w http.ResponseWriter, r *http.Request) {
		if !b.bucket.Allow() {
			b.throttled.Add(1)
			status(http.StatusTooManyRequests)(w, r)
			return
		}
		b.served.Add(1)
		writeData(w, http.StatusOK, Contact{ID: r.PathValue("id")})
	}})
	return b
}
