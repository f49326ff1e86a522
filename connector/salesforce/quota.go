package salesforce

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
)

// quotaName is the quota's name in /status and the metrics.
const quotaName = "daily API requests"

// quota is the org's daily API allowance as the last Sforce-Limit-Info
// header told it (api-usage=N/M), and syncd's budget of it.
type quota struct {
	budget float64
	now    func() time.Time

	mu         sync.Mutex
	used       int64
	limit      int64
	observedAt time.Time
	probe      bool
}

// observe reads an answer's Sforce-Limit-Info header.
func (q *quota) observe(a remote.Answer) {
	used, limit, ok := parseLimitInfo(a.Header.Get("Sforce-Limit-Info"))
	if !ok {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used, q.limit, q.observedAt = used, limit, q.now()
}

// parseLimitInfo reads "api-usage=18/5000" out of the header, which may
// carry other entries ("per-app-api-usage=17/250(appName=sample)").
func parseLimitInfo(h string) (used, limit int64, ok bool) {
	for _, part := range strings.Split(h, ",") {
		v, found := strings.CutPrefix(strings.TrimSpace(part), "api-usage=")
		if !found {
			continue
		}
		a, b, cut := strings.Cut(v, "/")
		u, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		l, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if cut && err1 == nil && err2 == nil && u >= 0 && l > 0 {
			return u, l, true
		}
	}
	return 0, 0, false
}

// staleAfter is how old the last usage seen may be before a call is
// let through, spent budget or not, to learn whether the rolling 24-hour
// window has moved on.
const staleAfter = 10 * time.Minute

// check returns a *budgetError once the usage reached the budget, unless
// the call is the first of a read (allowProbe) or the usage last seen is
// stale: the allowance is a rolling 24-hour window that only an answer
// shows has moved, so a read makes one call to find out.
func (q *quota) check() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	probe := q.probe
	q.probe = false
	if q.limit > 0 && float64(q.used) >= q.budget*float64(q.limit) && !probe && q.now().Sub(q.observedAt) < staleAfter {
		return &budgetError{used: q.used, limit: q.limit, budget: q.budget}
	}
	return nil
}

// allowProbe lets the next call through whatever the usage last seen.
func (q *quota) allowProbe() {
	q.mu.Lock()
	q.probe = true
	q.mu.Unlock()
}

// quotas reports the allowance; nothing before the first answer.
func (q *quota) quotas() []connector.Quota {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.observedAt.IsZero() {
		return nil
	}
	return []connector.Quota{{Name: quotaName, Used: q.used, Limit: q.limit, Budget: q.budget, ObservedAt: q.observedAt}}
}
