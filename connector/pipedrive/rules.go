package pipedrive

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/internal/remote"
)

// Pipedrive's own rules: what each answer means for the call, and what
// each call costs. See FACTS.md for the sources.

// Retry policy of the client.
const (
	maxAttempts      = 5  // for 5xx and transport failures of idempotent calls
	maxLimitAttempts = 10 // for burst 429s
	requestTimeout   = 60 * time.Second
)

// Token costs of Pipedrive's documented endpoint types.
const (
	costGet    = 2
	costList   = 20
	costSearch = 40
	costWrite  = 10 // create or update a single entity
	costDelete = 6
)

// costOf is the documented token cost of a call.
func costOf(cl call) int64 {
	switch {
	case cl.method == http.MethodDelete:
		return costDelete
	case cl.method != http.MethodGet:
		return costWrite
	case strings.HasSuffix(cl.path, "/search"):
		return costSearch
	case strings.Count(cl.path, "/") > 3: // /api/v2/persons/{id}
		return costGet
	}
	return costList
}

// judge applies Pipedrive's rules to a non-2xx answer.
func judge(a remote.Answer) remote.Verdict {
	e := parseError(a.Status, a.Route, a.Body)
	switch {
	case a.Status == http.StatusTooManyRequests && isSearch(a.Route):
		return judgeSearchLimited(a.Header, e)
	case a.Status == http.StatusTooManyRequests:
		return judgeLimited(a.Header, e)
	case a.Status >= 500:
		return remote.Verdict{Action: remote.Retry, Err: e}
	case a.Status == http.StatusForbidden && !strings.HasPrefix(strings.TrimSpace(string(a.Body)), "{"):
		// Cloudflare's block page: Pipedrive denies a token that kept on
		// after 429s.
		return remote.Verdict{Action: remote.Fail, Err: fmt.Errorf("%w: access denied by Pipedrive's high-volume protection (too many requests after 429 answers); lower rateLimit and wait before retrying", e)}
	}
	return remote.Verdict{Action: remote.Fail, Err: e}
}

// judgeLimited tells a burst 429 (the 2-second window is spent: every
// call on the token waits for it, and retries; the request was not
// applied) from the daily budget's (the window still has requests left:
// nothing succeeds before the budget resets, so the pass stops).
func judgeLimited(h http.Header, e *Error) remote.Verdict {
	if rem, known := headerInt(h, "x-ratelimit-remaining"); known && rem > 0 {
		return remote.Verdict{Action: remote.Fail, Err: fmt.Errorf("%w: %w", ErrDailyBudget, e)}
	}
	return remote.Verdict{Action: remote.Wait, Pause: burstWait(h), Err: e}
}

// judgeSearchLimited judges a 429 of the Search API: its own window (10
// searches per 2 s) is spent, whatever the headers say of the others. It
// is never the daily budget's (a pass must not stop for the day because
// searches came in a burst: the daily budget shows on the calls that are
// not searches), and only this search waits for the window, not every
// call on the token.
func judgeSearchLimited(h http.Header, e *Error) remote.Verdict {
	return remote.Verdict{Action: remote.Wait, After: burstWait(h), Backoff: true, Err: e}
}

// burstWait is how long a spent burst window lasts: Retry-After when
// sent, else x-ratelimit-reset (seconds), else the whole window.
func burstWait(h http.Header) time.Duration {
	if d, ok := remote.RetryAfter(h, time.Minute); ok {
		return d
	}
	if n, ok := headerInt(h, "x-ratelimit-reset"); ok && n >= 0 {
		return max(time.Duration(n)*time.Second, 100*time.Millisecond)
	}
	return burstWindow
}

func headerInt(h http.Header, name string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(h.Get(name)), 10, 64)
	return n, err == nil
}
