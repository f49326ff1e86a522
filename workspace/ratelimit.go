package workspace

import (
	"context"
	"crypto/sha256"
	"math"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"
	"weak"

	"golang.org/x/time/rate"
)

// The service allows a number of requests per second per API key, shared by
// every worker that uses the key. syncd therefore keeps one rate.Limiter per
// (base URL, API key) in a process-wide registry: every Client built for the
// same key, in any goroutine or connector, waits on the same limiter.
//
// Next to each limiter sits a gate: a shared "paused until" instant. When
// the service answers 429 with Retry-After, every caller of the limiter
// waits until then, not just the one that got the answer; without
// Retry-After the gate is closed briefly and the limiter's saved-up burst is
// drained, so that all callers slow down while the one that got the 429
// backs off exponentially.

// limiterKey identifies an API key at a service. The key is kept as a hash
// so that the registry never holds the secret itself.
type limiterKey struct {
	baseURL string
	keyHash [sha256.Size]byte
}

var limiters = struct {
	sync.Mutex
	m map[limiterKey]*rate.Limiter
}{m: map[limiterKey]*rate.Limiter{}}

// sharedLimiter returns the registry's limiter for (baseURL, apiKey),
// creating it with limit and burst. An existing limiter takes the newest
// limit and burst, so that a configuration reload applies to every client.
func sharedLimiter(baseURL, apiKey string, limit rate.Limit, burst int) *rate.Limiter {
	k := limiterKey{baseURL: strings.TrimRight(baseURL, "/"), keyHash: sha256.Sum256([]byte(apiKey))}
	limiters.Lock()
	defer limiters.Unlock()
	if l, ok := limiters.m[k]; ok {
		if l.Limit() != limit {
			l.SetLimit(limit)
		}
		if l.Burst() != burst {
			l.SetBurst(burst)
		}
		return l
	}
	l := rate.NewLimiter(limit, burst)
	limiters.m[k] = l
	return l
}

// gates holds the pause gate of each limiter. It is keyed by a weak pointer
// so that a limiter handed in by a caller (ClientOptions.Limiter) and then
// dropped does not keep its gate alive forever.
var gates = struct {
	sync.Mutex
	m map[weak.Pointer[rate.Limiter]]*gate
}{m: map[weak.Pointer[rate.Limiter]]*gate{}}

// gateFor returns the gate shared by every client of l.
func gateFor(l *rate.Limiter) *gate {
	wp := weak.Make(l)
	gates.Lock()
	defer gates.Unlock()
	if g, ok := gates.m[wp]; ok {
		return g
	}
	g := &gate{}
	gates.m[wp] = g
	runtime.AddCleanup(l, func(wp weak.Pointer[rate.Limiter]) {
		gates.Lock()
		delete(gates.m, wp)
		gates.Unlock()
	}, wp)
	return g
}

// gate is a shared "paused until" instant.
type gate struct {
	mu    sync.Mutex
	until time.Time
}

// pauseUntil closes the gate until t, unless it is already closed longer.
func (g *gate) pauseUntil(t time.Time) {
	g.mu.Lock()
	if t.After(g.until) {
		g.until = t
	}
	g.mu.Unlock()
}

// pausedUntil returns the instant the gate opens (zero or past when open).
func (g *gate) pausedUntil() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

// wait blocks until the gate is open or ctx is done. The gate may be
// pushed further while waiting; wait follows it.
func (g *gate) wait(ctx context.Context) error {
	for {
		d := time.Until(g.pausedUntil())
		if d <= 0 {
			return ctx.Err()
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// drain takes every token the limiter has saved up, so that callers after
// a 429 proceed at the steady rate instead of in a burst: the service's
// bucket is empty, ours should be too.
func drain(l *rate.Limiter) {
	now := time.Now()
	if n := int(math.Floor(l.TokensAt(now))); n > 0 {
		l.AllowN(now, n)
	}
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is exponential backoff with full jitter: the n-th retry (n >= 1)
// sleeps a uniformly random duration in [0, min(max, base*2^(n-1))].
type backoff struct {
	base, max time.Duration
}

// delay returns the sleep before retry n.
func (b backoff) delay(n int) time.Duration {
	d := b.max
	if n < 1 {
		n = 1
	}
	if n <= 32 {
		if e := b.base << (n - 1); e > 0 && e < b.max {
			d = e
		}
	}
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// parseRetryAfter reads a Retry-After header value: delay-seconds or an
// HTTP date. It reports false when the value is absent or unreadable.
func parseRetryAfter(v string, now time.Time) (time.Time, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, false
	}
	if secs, ok := parseDelaySeconds(v); ok {
		return now.Add(secs), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

func parseDelaySeconds(v string) (time.Duration, bool) {
	var n int64
	for _, r := range v {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int64(r-'0')
		if n > math.MaxInt32 {
			return 0, false
		}
	}
	return time.Duration(n) * time.Second, true
}
