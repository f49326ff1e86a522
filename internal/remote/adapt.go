package remote

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
	"golang.org/x/time/rate"
)

// Adaptive rate (AIMD). The configured limit of a credential is a
// ceiling, not a promise: the service may allow less (another plan, other
// tools on the same key, a limit it lowered). Every client of a limiter
// reports its answers to the limiter's Gate, which adapts the limiter:
//
//   - a run of 429s (at least adaptMinThrottled of the last adaptWindow
//     answers, and more than a tenth of them) while the service accepts
//     clearly less than the rate allows (under adaptAccepted of it,
//     over the last two seconds) lowers the rate to nine tenths of what
//     it accepted: multiplicative decrease, at most once per
//     adaptCooldown so that a cut shows its effect before the next. 429s
//     at full pace (timing jitter against the service's bucket) only
//     pause, as before;
//   - each full second without such a run adds a two-hundredth of the ceiling
//     back (additive increase), up to the ceiling: a 50/s client cut to
//     5/s climbs back over 3 minutes, and finds the service's limit on the way.
//
// A lone 429 (a Retry-After, a burst) only pauses as before. Each cut is
// logged at warn and the climb back to the ceiling at info; Rates lists
// every adapted limiter for the health page.
const (
	adaptWindow       = 20
	adaptMinThrottled = 3
	adaptMaxShare     = 0.1
	adaptCooldown     = time.Second
	adaptAccepted     = 0.9   // the accepted share of the rate under which a run of 429s cuts
	adaptStepShare    = 0.005 // of the ceiling, per second
	adaptFloorShare   = 0.02  // of the ceiling, at least 0.5/s
	acceptedSpan      = 2 * time.Second
)

// adapt is a Gate's AIMD state; the zero value adapts nothing until the
// limiter's ceiling is known (configure).
type adapt struct {
	mu       sync.Mutex
	name     string     // the API, for logs and Rates
	ceiling  rate.Limit // the configured limit
	burst    int        // the configured burst
	recent   []bool     // the last answers: true for a 429
	ok       []time.Time
	lastCut  time.Time
	lastStep time.Time
	calls    int64
	throttle int64
	cuts     int64
	first    time.Time // the first answer seen
}

// configure records the limiter's configured limit and burst. A changed
// ceiling (a new configuration) applies at once, ending any adaptation.
func (g *Gate) configure(l *rate.Limiter, limit rate.Limit, burst int) {
	a := &g.adapt
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ceiling == limit && a.burst == burst {
		return
	}
	a.ceiling, a.burst = limit, burst
	l.SetLimit(limit)
	l.SetBurst(burst)
}

// SetCeiling lowers (or raises) the configured limit of a shared limiter,
// as a service's own rate-limit headers tell it: the adaptation then
// works below the new ceiling. Calling it again with the same values
// changes nothing.
func SetCeiling(l *rate.Limiter, limit rate.Limit, burst int) {
	g := GateFor(l)
	a := &g.adapt
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ceiling == limit && a.burst == burst {
		return
	}
	a.ceiling, a.burst = limit, burst
	if a.ceiling == 0 || l.Limit() > limit || a.cuts == 0 {
		l.SetLimit(limit)
	}
	l.SetBurst(min(burst, adaptedBurst(l.Limit(), burst)))
}

// adaptedBurst is the burst kept at limit: no more than a second's worth,
// at least one.
func adaptedBurst(limit rate.Limit, ceiling int) int {
	return max(1, min(ceiling, int(math.Ceil(float64(limit)))))
}

// observe adapts l to one answer's status.
func (g *Gate) observe(l *rate.Limiter, name string, status int, log *logrus.Entry) {
	if l == nil || l.Limit() == rate.Inf || status == 0 {
		return
	}
	a := &g.adapt
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ceiling == 0 {
		a.ceiling, a.burst = l.Limit(), l.Burst()
	}
	if a.name == "" {
		a.name = name
	}
	if a.first.IsZero() {
		a.first = now
	}
	throttled := status == 429
	a.calls++
	if throttled {
		a.throttle++
	}
	a.recent = append(a.recent, throttled)
	if len(a.recent) > adaptWindow {
		a.recent = a.recent[len(a.recent)-adaptWindow:]
	}
	if status/100 == 2 {
		a.ok = append(a.ok, now)
		if i, _ := slices.BinarySearchFunc(a.ok, now.Add(-acceptedSpan), func(t, x time.Time) int { return t.Compare(x) }); i > 0 {
			a.ok = slices.Delete(a.ok, 0, i)
		}
	}
	n := 0
	for _, th := range a.recent {
		if th {
			n++
		}
	}
	cur := l.Limit()
	// The accepted rate is measured over the last acceptedSpan, or since
	// the first answer when that is sooner (at least half a second).
	span := min(acceptedSpan, max(now.Sub(a.first), acceptedSpan/4))
	accepted := rate.Limit(float64(len(a.ok)) / span.Seconds())
	if throttled && n >= adaptMinThrottled && float64(n) > adaptMaxShare*float64(len(a.recent)) &&
		accepted < adaptAccepted*cur && now.Sub(a.lastCut) >= adaptCooldown {
		next := max(a.floor(), accepted*0.9)
		if next < cur {
			l.SetLimit(next)
			l.SetBurst(adaptedBurst(next, a.burst))
			a.cuts++
			log.WithFields(logrus.Fields{logfield.API: a.name, logfield.Rate: round(next), logfield.Was: round(cur), logfield.Configured: round(a.ceiling),
				logfield.Throttled: n, logfield.OfLast: len(a.recent)}).Warn("api answers 429 again and again; rate lowered")
		}
		a.lastCut, a.lastStep = now, now
		a.recent = a.recent[:0]
		return
	}
	if throttled || cur >= a.ceiling {
		return
	}
	if a.lastStep.IsZero() {
		a.lastStep = now
	}
	secs := math.Floor(now.Sub(a.lastStep).Seconds())
	if secs < 1 {
		return
	}
	a.lastStep = a.lastStep.Add(time.Duration(secs) * time.Second)
	next := min(a.ceiling, cur+rate.Limit(secs)*a.step())
	l.SetLimit(next)
	l.SetBurst(adaptedBurst(next, a.burst))
	if next >= a.ceiling {
		log.WithFields(logrus.Fields{logfield.API: a.name, logfield.Rate: round(next)}).Info("api rate back at its configured limit")
	}
}

func (a *adapt) step() rate.Limit { return max(a.ceiling*adaptStepShare, 0.05) }

func (a *adapt) floor() rate.Limit { return min(a.ceiling, max(a.ceiling*adaptFloorShare, 0.5)) }

func round(l rate.Limit) float64 { return math.Round(float64(l)*100) / 100 }

// RateStatus is what the health page shows of an adapted limiter.
type RateStatus struct {
	// API names the service ("workspace api", "hubspot").
	API string `json:"api"`
	// Limit is the rate now, Configured the ceiling (requests/s).
	Limit      float64 `json:"limit"`
	Configured float64 `json:"configured"`
	// Calls and Throttled count the answers seen and the 429s among them.
	Calls     int64 `json:"calls"`
	Throttled int64 `json:"throttled"`
	// Cuts counts the times the rate was lowered.
	Cuts int64 `json:"cuts"`
	// LastCut is when the rate was last lowered.
	LastCut time.Time `json:"lastCut,omitzero"`
}

// Rates returns the limiters that met a 429 since the process started,
// by API name.
func Rates() []RateStatus {
	gates.Lock()
	var out []RateStatus
	for wp, g := range gates.m {
		l := wp.Value()
		if l == nil {
			continue
		}
		a := &g.adapt
		a.mu.Lock()
		if a.throttle > 0 {
			out = append(out, RateStatus{API: a.name, Limit: round(l.Limit()), Configured: round(a.ceiling),
				Calls: a.calls, Throttled: a.throttle, Cuts: a.cuts, LastCut: a.lastCut})
		}
		a.mu.Unlock()
	}
	gates.Unlock()
	slices.SortFunc(out, func(x, y RateStatus) int {
		if x.API < y.API {
			return -1
		}
		if x.API > y.API {
			return 1
		}
		return 0
	})
	return out
}
