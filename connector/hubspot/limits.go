package hubspot

import (
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/internal/remote"
)

// HubSpot's limits are per private app, so every connector opened with
// the same token (and base URL) shares one limiter, and one search
// limiter: two connectors on one account cannot together exceed them.
// The registry (remote.SharedLimiter) keys on a hash of the token, never
// the token itself.

// sharedLimiter returns the limiter of (baseURL, token, search), created
// or updated to limit and burst.
func sharedLimiter(baseURL string, token Secret, search bool, limit rate.Limit, burst int) *rate.Limiter {
	scope := ""
	if search {
		scope = "search"
	}
	return remote.SharedLimiter(baseURL, token.Reveal(), scope, limit, burst)
}

// tenSecondly returns the rate and burst of a token bucket that never
// lets more than n calls through in any 10-second window: the bucket
// holds a tenth of n and refills at the rest over 10 s (n=100: a burst
// of 10, then 9 per second).
func tenSecondly(n int) (rate.Limit, int) {
	burst := max(1, n/10)
	r := float64(n-burst) / 10
	if r <= 0 {
		r = 0.1
	}
	return rate.Limit(r), burst
}

// perSecond returns the rate and burst of a bucket that lets at most
// n+1 calls through in any second (burst 1): n=4 stays within HubSpot's 5.
func perSecond(n float64) (rate.Limit, int) {
	return rate.Limit(n), 1
}
