// Package progress follows a long pass of a connector as it runs: records
// done against the total the connector announced, the writes made so far
// by kind, the rate, and the time left.
//
// The reconciler feeds a Tracker (Start, Phase, Total, Step, Add,
// SetWrites, Finish); the status API, the health page and the command line read
// Snapshots from it at their own pace, so that watching costs the pass
// nothing but a mutex.
//
// The time left is the records left over the recent rate, where the rate
// is what the pass achieved over the last RateWindow, capped by what the
// API's rate limit allows at the pass's own calls per record: a pass
// that starts on the limiter's burst does not promise to keep that pace.
package progress

import (
	"sync"
	"time"
)

// RateWindow is the span over which the rate is measured: long enough to
// smooth out a batch's look-up, short enough to follow a change of pace.
const RateWindow = 30 * time.Second

// Phases of a pass.
const (
	PhaseStarting = "starting"
	// PhaseListing is the listing of the workspace (first sync, resync).
	PhaseListing = "listing"
	// PhaseReading is the read of the connector's records and their writes.
	PhaseReading = "reading"
	// PhaseSweeping is the handling of records gone from a complete read.
	PhaseSweeping = "sweeping"
	// PhaseFinished is the phase of a Final snapshot.
	PhaseFinished = "finished"
)

// Snapshot is a pass's progress at one moment, as /status shows it.
type Snapshot struct {
	// Kind is run or resync.
	Kind  string `json:"kind"`
	Phase string `json:"phase"`
	// Reason says why the pass reads more than usual ("the mapping
	// changed: every record is read once more"); "" for a usual pass.
	Reason string `json:"reason,omitempty"`
	// Done counts the records read and handled (written, unchanged or set
	// aside).
	Done int64 `json:"done"`
	// Total is how many records the pass will read; nil when unknown.
	Total *int64 `json:"total"`
	// TotalIsEstimate is set when Total is a projection, not a count.
	TotalIsEstimate bool `json:"totalIsEstimate"`
	// Writes counts the writes made so far by kind (created, updated,
	// deleted, unchanged, failed...).
	Writes map[string]int64 `json:"writes"`
	// RatePerSecond is records per second over the recent window.
	RatePerSecond float64 `json:"ratePerSecond"`
	// ETASeconds is the time left; nil when it cannot be told (no total,
	// no rate yet).
	ETASeconds *float64 `json:"etaSeconds"`
	// APICalls counts the workspace calls the pass made so far.
	APICalls  int64     `json:"apiCalls"`
	StartedAt time.Time `json:"startedAt"`
}

// ETA returns the time left, and false when unknown.
func (s Snapshot) ETA() (time.Duration, bool) {
	if s.ETASeconds == nil {
		return 0, false
	}
	return time.Duration(*s.ETASeconds * float64(time.Second)), true
}

// Fraction is Done over Total in [0, 1], and false when Total is unknown.
func (s Snapshot) Fraction() (float64, bool) {
	if s.Total == nil {
		return 0, false
	}
	if *s.Total <= 0 {
		return 1, true
	}
	return min(float64(s.Done)/float64(*s.Total), 1), true
}

// Options configure a Tracker.
type Options struct {
	// Calls returns the count of API calls made so far (the workspace
	// client's Calls); nil means the limit is not taken into account.
	Calls func() int64
	// RateLimit is the API's requests per second (0: none).
	RateLimit float64
	// Now is the clock (tests).
	Now func() time.Time
}

// sample is the pass's counters at one moment, for the rate.
type sample struct {
	at    time.Time
	done  int64
	calls int64
}

// Tracker follows the passes of one connector, one at a time. Its
// methods are safe for concurrent use; those that feed it do nothing
// when no pass is running, so a nil-free reconciler can call them always.
type Tracker struct {
	opts Options

	mu       sync.Mutex
	running  bool
	snap     Snapshot // counters, Total and ETA excluded
	total    int64
	known    bool
	calls0   int64
	samples  []sample // oldest first, spanning about RateWindow
	lastSamp time.Time
	final    *Snapshot // the last finished pass, as it ended
	base     int64     // records of the batches done
	inBatch  int64     // records of the batch in flight, by Step
}

// New returns a Tracker.
func New(o Options) *Tracker {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Tracker{opts: o}
}

func (t *Tracker) calls() int64 {
	if t.opts.Calls == nil {
		return 0
	}
	return t.opts.Calls()
}

// Start begins a pass of that kind (run, resync), forgetting the last.
func (t *Tracker) Start(kind string) {
	t.locked(func(now time.Time, calls int64) {
		t.running, t.known, t.total, t.calls0, t.base, t.inBatch = true, false, 0, calls, 0, 0
		t.snap = Snapshot{Kind: kind, Phase: PhaseStarting, Writes: map[string]int64{}, StartedAt: now}
		t.samples = []sample{{at: now, calls: calls}}
		t.lastSamp = now
	})
}

// locked runs f under the lock with the time and the API calls so far
// (read before the lock: Calls may take its own). A nil Tracker does
// nothing.
func (t *Tracker) locked(f func(now time.Time, calls int64)) {
	if t == nil {
		return
	}
	now := t.opts.Now()
	calls := t.calls()
	t.mu.Lock()
	defer t.mu.Unlock()
	f(now, calls)
}

// Phase sets the pass's phase.
func (t *Tracker) Phase(p string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.snap.Phase = p
	}
}

// Reason sets why the running pass reads more than usual.
func (t *Tracker) Reason(why string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.snap.Reason = why
	}
}

// Total sets how many records the pass will read (estimate: a
// projection). Without a call the total is unknown.
func (t *Tracker) Total(n int64, estimate bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.total, t.known, t.snap.TotalIsEstimate = n, true, estimate
	}
}

// TotalIsEstimate reports whether the running pass's total is an
// estimate (which a better one may replace).
func (t *Tracker) TotalIsEstimate() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running && t.known && t.snap.TotalIsEstimate
}

// Add counts a batch of n more records handled; it replaces the Steps
// counted during the batch.
func (t *Tracker) Add(n int) {
	t.count(func() {
		t.base += int64(n)
		t.snap.Done, t.inBatch = t.base, 0
	})
}

// Step counts one record of the batch in flight handled, so that a batch
// that takes minutes shows its progress; Add then counts the batch as a
// whole.
func (t *Tracker) Step() {
	t.count(func() {
		t.inBatch++
		t.snap.Done = t.base + t.inBatch
	})
}

// count applies f to the running pass's counters and samples the rate.
func (t *Tracker) count(f func()) {
	t.locked(func(now time.Time, calls int64) {
		if t.running {
			f()
			t.record(now, calls)
		}
	})
}

// SetWrites sets the writes made so far, by kind; kinds with no write
// are left out.
func (t *Tracker) SetWrites(w map[string]int64) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.running {
		return
	}
	clear(t.snap.Writes)
	for k, v := range w {
		if v != 0 {
			t.snap.Writes[k] = v
		}
	}
}

// Finish ends the pass: Snapshot reports nothing running until the next
// Start, and Final reports the pass as it ended.
func (t *Tracker) Finish() {
	if t == nil {
		return
	}
	s, ok := t.Snapshot()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running = false
	if ok {
		s.Phase, s.ETASeconds = PhaseFinished, nil
		t.final = &s
	}
}

// Final returns the last finished pass as it ended (phase finished), and
// false when none finished yet.
func (t *Tracker) Final() (Snapshot, bool) {
	if t == nil {
		return Snapshot{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.final == nil {
		return Snapshot{}, false
	}
	return *t.final, true
}

// record keeps a sample for the rate: at most one per second, and none
// older than needed to span RateWindow.
func (t *Tracker) record(now time.Time, calls int64) {
	if now.Sub(t.lastSamp) < time.Second && len(t.samples) > 1 {
		t.samples[len(t.samples)-1] = sample{at: now, done: t.snap.Done, calls: calls}
		return
	}
	t.samples = append(t.samples, sample{at: now, done: t.snap.Done, calls: calls})
	t.lastSamp = now
	drop := 0
	for drop < len(t.samples)-2 && now.Sub(t.samples[drop+1].at) >= RateWindow {
		drop++
	}
	t.samples = t.samples[drop:]
}

// Snapshot returns the running pass's progress, and false when no pass
// is running.
func (t *Tracker) Snapshot() (Snapshot, bool) {
	if t == nil {
		return Snapshot{}, false
	}
	now := t.opts.Now()
	calls := t.calls()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.running {
		return Snapshot{}, false
	}
	s := t.snap
	s.Writes = make(map[string]int64, len(t.snap.Writes))
	for k, v := range t.snap.Writes {
		s.Writes[k] = v
	}
	s.APICalls = calls - t.calls0
	if t.known {
		// A read that goes past its total (records added meanwhile, an
		// estimate short of the truth) shows the count it reached.
		total := max(t.total, s.Done)
		s.Total = &total
	}
	s.RatePerSecond = t.rate(now, calls)
	if s.Total != nil && s.RatePerSecond > 0 {
		eta := float64(*s.Total-s.Done) / s.RatePerSecond
		s.ETASeconds = &eta
	}
	return s, true
}

// rate is records per second over the sample window up to now, capped
// by the API rate limit at the window's calls per record.
func (t *Tracker) rate(now time.Time, calls int64) float64 {
	first := t.samples[0]
	span := now.Sub(first.at).Seconds()
	records := float64(t.snap.Done - first.done)
	if span <= 0 || records <= 0 {
		return 0
	}
	r := records / span
	if t.opts.RateLimit > 0 {
		if perRecord := float64(calls-first.calls) / records; perRecord > 0 {
			r = min(r, t.opts.RateLimit/perRecord)
		}
	}
	return r
}
