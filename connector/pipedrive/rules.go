package pipedrive

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Pipedrive's own rules: what each answer means for the call, and what
// each call costs. See FACTS.md for the sources.

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

// retryState counts a call's failed attempts.
type retryState struct{ failures, limited int }

// verdict is what to do after an attempt: done (decode the answer), fail
// with err, or wait and try again (pause: at the shared gate, so that
// every call on the token waits).
type verdict struct {
	done  bool
	err   error
	wait  time.Duration
	pause bool
	why   string
}

// judge applies Pipedrive's rules to one attempt's outcome.
func judge(cl call, st *retryState, status int, h http.Header, body []byte, sent bool, err, ctxErr error) verdict {
	if err != nil {
		return judgeTransport(cl, st, sent, err, ctxErr)
	}
	switch {
	case status >= 200 && status < 300:
		return verdict{done: true}
	case status == http.StatusTooManyRequests:
		return judgeLimited(cl, st, h, body)
	case status >= 500:
		e := parseError(status, cl.route, body)
		if !cl.idempotent {
			return verdict{err: fmt.Errorf("%w: %w", ErrOutcomeUnknown, e)}
		}
		return retry(st, e, "pipedrive call failed, retrying")
	case status == http.StatusForbidden && !strings.HasPrefix(strings.TrimSpace(string(body)), "{"):
		// Cloudflare's block page: Pipedrive denies a token that kept on
		// after 429s.
		return verdict{err: fmt.Errorf("pipedrive %s: 403: access denied by Pipedrive's high-volume protection (too many requests after 429 answers); lower rateLimit and wait before retrying", cl.route)}
	}
	return verdict{err: parseError(status, cl.route, body)}
}

func judgeTransport(cl call, st *retryState, sent bool, err, ctxErr error) verdict {
	err = fmt.Errorf("pipedrive %s: %w", cl.route, err)
	if ctxErr != nil {
		err = fmt.Errorf("pipedrive %s: %w", cl.route, ctxErr)
	}
	if !cl.idempotent && sent {
		return verdict{err: fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)}
	}
	if ctxErr != nil {
		return verdict{err: err}
	}
	return retry(st, err, "pipedrive call failed, retrying")
}

func retry(st *retryState, err error, why string) verdict {
	st.failures++
	if st.failures >= maxAttempts {
		return verdict{err: err}
	}
	return verdict{wait: backoff(st.failures), why: why}
}

// judgeLimited tells a burst 429 (the 2-second window is spent: wait for
// it, at the shared gate, and retry; the request was not applied) from
// the daily budget's (the window still has requests left: nothing
// succeeds before the budget resets).
func judgeLimited(cl call, st *retryState, h http.Header, body []byte) verdict {
	e := parseError(http.StatusTooManyRequests, cl.route, body)
	if rem, known := headerInt(h, "x-ratelimit-remaining"); known && rem > 0 {
		return verdict{err: fmt.Errorf("%w: %w", ErrDailyBudget, e)}
	}
	st.limited++
	if st.limited >= maxLimitAttempts {
		return verdict{err: e}
	}
	return verdict{wait: burstWait(h), pause: true, why: "pipedrive rate limited, waiting"}
}

// burstWait is how long a spent burst window lasts: Retry-After when
// sent, else x-ratelimit-reset (seconds), else the whole window.
func burstWait(h http.Header) time.Duration {
	if n, ok := headerInt(h, "Retry-After"); ok && n >= 0 {
		return time.Duration(n) * time.Second
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

// backoff is the capped exponential delay before retry n (from 1).
func backoff(n int) time.Duration {
	d := backoffBase << (n - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	return d
}
