package pipedrive

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
)

// limits are what the connectors using one API token share besides
// remote's limiter and pause gate: the tokens they spent today (for
// tokenBudget), and the figures of the last answer's headers. Pipedrive's
// burst limit is per token, so an answer announcing a lower limit than
// configured lowers the shared limiter.
type limits struct {
	limiter *rate.Limiter

	mu         sync.Mutex
	configured int    // rateLimit of the settings
	budget     int64  // tokenBudget; 0 none
	day        string // UTC date of spent
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

var registry = struct {
	sync.Mutex
	m map[*rate.Limiter]*limits
}{m: map[*rate.Limiter]*limits{}}

// limitsOf returns the limits of the connectors of a shared limiter
// (remote.SharedLimiter: one per token), set to the settings.
func limitsOf(limiter *rate.Limiter, rateLimit int, budget int64) *limits {
	registry.Lock()
	defer registry.Unlock()
	l, ok := registry.m[limiter]
	if !ok {
		l = &limits{limiter: limiter, now: time.Now}
		registry.m[limiter] = l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.configured, l.budget = rateLimit, budget
	return l
}

// charge adds cost to the day's tokens, refusing when the budget would
// be exceeded.
func (l *limits) charge(cost int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if day := l.now().UTC().Format(time.DateOnly); day != l.day {
		l.day, l.spent = day, 0
	}
	if l.budget > 0 && l.spent+cost > l.budget {
		return fmt.Errorf("%w: %d of the %d tokens of tokenBudget spent today (UTC)", ErrDailyBudget, l.spent, l.budget)
	}
	l.spent += cost
	return nil
}

// observe reads an answer's rate-limit headers. A limit lower than the
// configured one (another plan) lowers the limiter to it; a higher one
// never raises it. A window left with no request (spent by others on the
// token) pauses every call until it resets.
func (l *limits) observe(a remote.Answer) {
	if isSearch(a.Route) {
		// The Search API's answers report its own window (10 per 2 s):
		// not the token's burst limit, which they must not lower.
		return
	}
	h, now := a.Header, l.now()
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
		r, b := bucket(int(lim))
		remote.SetCeiling(l.limiter, r, b) // the adaptive rate stays below it
	}
	if a.Status/100 == 2 && l.remaining <= 0 {
		// Others on the token (the app's users count too) spent the
		// window: hold every call until it resets rather than meet a 429.
		remote.GateFor(l.limiter).PauseUntil(l.resetAt)
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
