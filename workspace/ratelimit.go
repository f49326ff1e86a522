package workspace

import (
	"math"
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

// jitterHeadroom is the part of the service's burst the client leaves
// unused, as requests per second times this time.
//
// A request takes its token at the client and is counted by the service
// when it arrives: between the two lie the client's scheduling, the
// network and the service's own queue. When that delay varies, requests
// taken evenly arrive bunched, and a client that spent the whole burst
// (after an idle moment, with a full bucket) would see the service refuse
// the bunch's last ones. Leaving rate x 100 ms of the burst unused absorbs
// up to 100 ms of jitter; at the service's default (10/s, burst 10) the
// client still bursts 9.
const jitterHeadroom = 100 * time.Millisecond

// clientBurst is the burst of the client's limiter for a service that
// allows limit requests per second and burst at once.
func clientBurst(limit float64, burst int) int {
	return max(1, burst-int(math.Ceil(limit*jitterHeadroom.Seconds())))
}
