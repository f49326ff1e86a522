package remote

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

// limiterKey names a credential at a service. The secret is kept as a
// hash so that the registry never holds it.
type limiterKey struct {
	baseURL string
	secret  [sha256.Size]byte
	scope   string
}

var limiters = struct {
	sync.Mutex
	m map[limiterKey]*rate.Limiter
}{m: map[limiterKey]*rate.Limiter{}}

// SharedLimiter returns the process-wide limiter of a credential: every
// client built for the same base URL (trailing slashes aside), secret (an
// API key, a token, a client id) and scope shares it, whatever connector
// or goroutine it serves. scope tells apart the separate limits of one
// credential ("" for the general one, "search" for HubSpot's search
// limit). The limiter is created with limit and burst; an existing one
// takes the newest limit and burst, so a configuration reload applies to
// every client. The limiter's pause gate is GateFor(limiter).
func SharedLimiter(baseURL, secret, scope string, limit rate.Limit, burst int) *rate.Limiter {
	k := limiterKey{baseURL: strings.TrimRight(baseURL, "/"), secret: sha256.Sum256([]byte(secret)), scope: scope}
	limiters.Lock()
	defer limiters.Unlock()
	if l, ok := limiters.m[k]; ok {
		GateFor(l).configure(l, limit, burst)
		return l
	}
	l := newEmptyLimiter(limit, burst)
	limiters.m[k] = l
	GateFor(l).configure(l, limit, burst)
	return l
}

// newEmptyLimiter returns a limiter whose bucket starts empty. The
// service's bucket for the credential may have been spent just before this
// process started (an earlier run, another tool, a restart): a limiter
// that started full would send a burst the service then refuses with a
// 429. Starting empty, it is never ahead of the service's bucket, which
// refills at the same rate up to the same burst; it costs at most
// burst/limit seconds at the start of the first pass.
func newEmptyLimiter(limit rate.Limit, burst int) *rate.Limiter {
	l := rate.NewLimiter(limit, burst)
	if limit != rate.Inf && burst > 0 {
		l.AllowN(time.Now(), burst)
	}
	return l
}

// gates holds the pause gate of each limiter, keyed by a weak pointer so
// that a limiter a caller made and dropped does not keep its gate alive.
var gates = struct {
	sync.Mutex
	m map[weak.Pointer[rate.Limiter]]*Gate
}{m: map[weak.Pointer[rate.Limiter]]*Gate{}}

// GateFor returns the pause gate shared by every client of l.
func GateFor(l *rate.Limiter) *Gate {
	wp := weak.Make(l)
	gates.Lock()
	defer gates.Unlock()
	if g, ok := gates.m[wp]; ok {
		return g
	}
	g := &Gate{}
	gates.m[wp] = g
	runtime.AddCleanup(l, func(wp weak.Pointer[rate.Limiter]) {
		gates.Lock()
		delete(gates.m, wp)
		gates.Unlock()
	}, wp)
	return g
}

// Gate is a shared "paused until" instant: while it is closed, no client
// of its limiter sends a request. A 429 with Retry-After closes it, so
// that every caller of the credential waits, not only the one that got
// the answer.
type Gate struct {
	mu    sync.Mutex
	until time.Time

	adapt adapt // the limiter's adaptive rate (adapt.go)
}

// PauseUntil closes the gate until t, unless it is already closed longer.
func (g *Gate) PauseUntil(t time.Time) {
	g.mu.Lock()
	if t.After(g.until) {
		g.until = t
	}
	g.mu.Unlock()
}

// PausedUntil returns the instant the gate opens (zero or past when open).
func (g *Gate) PausedUntil() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

// Wait blocks until the gate is open or ctx is done. The gate may be
// pushed further while waiting; Wait follows it.
func (g *Gate) Wait(ctx context.Context) error {
	for {
		d := time.Until(g.PausedUntil())
		if d <= 0 {
			return ctx.Err()
		}
		if err := Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// Drain takes every token the limiter has saved up, so that callers after
// a 429 go on at the steady rate instead of in a burst: the service's
// bucket is empty, ours should be too.
func Drain(l *rate.Limiter) {
	now := time.Now()
	if n := int(math.Floor(l.TokensAt(now))); n > 0 {
		l.AllowN(now, n)
	}
}

// BriefPause is how long every caller of l holds back after a 429
// without Retry-After. A 429 means the service's bucket is empty; holding
// back for P lets it bank P*limit requests, which then absorb P of timing
// jitter between our limiter and the service's bucket. P is base, or less
// when the burst refills sooner (burst/limit), and at least 20ms.
func BriefPause(l *rate.Limiter, base time.Duration) time.Duration {
	d := base
	if l != nil && l.Limit() > 0 && l.Limit() != rate.Inf {
		d = min(d, time.Duration(float64(l.Burst())*float64(time.Second)/float64(l.Limit())))
	}
	return max(d, 20*time.Millisecond)
}

// Sleep waits for d or until ctx is done, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) error {
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

// Backoff is capped exponential backoff: the n-th retry (n >= 1) waits
// min(Max, Base*2^(n-1)), or with Jitter a uniformly random duration in
// [0, that] ("full jitter", so that callers that failed together do not
// come back together).
type Backoff struct {
	Base, Max time.Duration
	Jitter    bool
}

// Delay returns the wait before retry n.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Max
	n = max(n, 1)
	if n <= 32 {
		if e := b.Base << (n - 1); e > 0 && e < b.Max {
			d = e
		}
	}
	if d <= 0 {
		return 0
	}
	if b.Jitter {
		return rand.N(d + 1)
	}
	return d
}

// ParseRetryAfter reads a Retry-After value: delay-seconds (a
// non-negative integer) or an HTTP date. It reports false when the value
// is absent or unreadable.
func ParseRetryAfter(v string, now time.Time) (time.Time, bool) {
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

// RetryAfter returns the wait a Retry-After header asks for, from now,
// capped at limit (when limit > 0). It reports false when there is no
// readable header or the instant has passed.
func RetryAfter(h http.Header, limit time.Duration) (time.Duration, bool) {
	now := time.Now()
	until, ok := ParseRetryAfter(h.Get("Retry-After"), now)
	if !ok || !until.After(now) {
		return 0, false
	}
	d := until.Sub(now)
	if limit > 0 {
		d = min(d, limit)
	}
	return d, true
}
