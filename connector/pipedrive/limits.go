package pipedrive

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
)

// limits are what the connectors using one API token share: Pipedrive's
// burst limit is per token, so they share one limiter and one pause gate
// (a 429 makes every call on the token wait), the tokens they spent
// today (for tokenBudget) and the figures of the last answer's headers.
type limits struct {
	limiter *rate.Limiter

	mu         sync.Mutex
	configured int       // rateLimit of the settings
	paused     time.Time // no call before
	budget     int64     // tokenBudget; 0 none
	day        string    // UTC date of spent
	spent      int64
	seen       bool // an answer with rate-limit headers came
	limit      int64
	remaining  int64
	resetAt    time.Time
	observedAt time.Time
	dailyLeft  int64
	dailySeen  bool
	now        func() time.Time
}

type limitsKey struct {
	baseURL string
	token   [sha256.Size]byte
}

var registry = struct {
	sync.Mutex
	m map[limitsKey]*limits
}{m: map[limitsKey]*limits{}}

// sharedLimits returns the limits of (baseURL, token), made or updated to
// the settings. The registry keys on a hash of the token, never the
// token itself.
func sharedLimits(baseURL string, token connector.Secret, rateLimit int, budget int64) *limits {
	k := limitsKey{baseURL: strings.TrimRight(baseURL, "/"), token: sha256.Sum256([]byte(token.Reveal()))}
	registry.Lock()
	defer registry.Unlock()
	l, ok := registry.m[k]
	if !ok {
		l = &limits{limiter: newLimiter(rateLimit, burstWindow), now: time.Now}
		registry.m[k] = l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.configured != rateLimit {
		l.configured = rateLimit
		r, b := bucket(rateLimit, burstWindow)
		l.limiter.SetLimit(r)
		l.limiter.SetBurst(b)
	}
	l.budget = budget
	return l
}

// wait charges cost to the day's tokens (refusing when the budget would
// be exceeded), then waits for the pause gate and the limiter.
func (l *limits) wait(ctx context.Context, cost int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	now := l.now()
	if day := now.UTC().Format(time.DateOnly); day != l.day {
		l.day, l.spent = day, 0
	}
	if l.budget > 0 && l.spent+cost > l.budget {
		spent, budget := l.spent, l.budget
		l.mu.Unlock()
		return fmt.Errorf("%w: %d of the %d tokens of tokenBudget spent today (UTC)", ErrDailyBudget, spent, budget)
	}
	l.spent += cost
	paused := l.paused.Sub(now)
	l.mu.Unlock()
	if paused > 0 {
		if err := sleepCtx(ctx, paused); err != nil {
			return err
		}
	}
	return l.limiter.Wait(ctx)
}

// pause holds every call on the token until t.
func (l *limits) pause(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t.After(l.paused) {
		l.paused = t
	}
}

// observe reads an answer's rate-limit headers. A limit lower than the
// configured one (another plan, or a token shared with other tools)
// lowers the limiter to it; a higher one never raises it.
func (l *limits) observe(h http.Header, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := headerInt(h, "x-daily-requests-left"); ok {
		l.dailyLeft, l.dailySeen = n, true
	}
	lim, ok := headerInt(h, "x-ratelimit-limit")
	if !ok || lim < 1 {
		return
	}
	l.seen, l.limit, l.observedAt = true, lim, now
	l.remaining, _ = headerInt(h, "x-ratelimit-remaining")
	reset, _ := headerInt(h, "x-ratelimit-reset")
	l.resetAt = now.Add(time.Duration(reset) * time.Second)
	if int(lim) < l.configured {
		r, b := bucket(int(lim), burstWindow)
		if l.limiter.Limit() != r {
			l.limiter.SetLimit(r)
			l.limiter.SetBurst(b)
		}
	}
}

// quotas are the allowances as last seen.
func (l *limits) quotas() []connector.Quota {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []connector.Quota
	if l.seen {
		out = append(out, connector.Quota{
			Name: "burst requests (2 s window)", Used: max(0, l.limit-l.remaining), Limit: l.limit,
			ResetAt: l.resetAt, ObservedAt: l.observedAt,
		})
	}
	if l.dailySeen {
		out = append(out, connector.Quota{
			Name: "daily POST/PUT requests", Used: max(0, dailyPostPutLimit-l.dailyLeft), Limit: dailyPostPutLimit,
			ResetAt: nextMidnightUTC(l.observedAt), ObservedAt: l.observedAt,
		})
	}
	if l.budget > 0 {
		now := l.now()
		out = append(out, connector.Quota{
			Name: "daily API tokens spent by syncd", Used: l.spent, Limit: l.budget,
			ResetAt: nextMidnightUTC(now), ObservedAt: now,
		})
	}
	return out
}

// dailyPostPutLimit is Pipedrive's fair-usage limit of POST/PUT requests
// a day, which x-daily-requests-left counts down.
const dailyPostPutLimit = 10000

func nextMidnightUTC(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}
