package workspace

import (
	"time"

	"github.com/syncd-io/syncd/internal/remote"
)

// The service allows a number of requests per second per API key, shared by
// every worker that uses the key. Every Client built for the same (base URL,
// API key), in any goroutine or connector, therefore waits on one limiter
// from remote.SharedLimiter, and on the limiter's pause gate: when the
// service answers 429 with Retry-After, every caller of the key waits until
// then, not just the one that got the answer; without Retry-After the gate
// is closed briefly and the limiter's saved-up burst is drained, so that all
// callers slow down while the one that got the 429 backs off exponentially.

// backoff is exponential backoff with full jitter: the n-th retry (n >= 1)
// sleeps a uniformly random duration in [0, min(max, base*2^(n-1))].
type backoff struct {
	base, max time.Duration
}

// delay returns the sleep before retry n.
func (b backoff) delay(n int) time.Duration {
	return remote.Backoff{Base: b.base, Max: b.max, Jitter: true}.Delay(n)
}
