package connector

import (
	"errors"
	"time"
)

// Quota is a remote API's allowance as a connector last read it from its
// system's answers (a daily request count, a token budget of a window).
type Quota struct {
	// Name says what is counted, e.g. "daily API requests".
	Name string `json:"name"`
	// Used is what was spent so far in the current window.
	Used int64 `json:"used"`
	// Limit is the allowance of the window; 0 when unknown.
	Limit int64 `json:"limit"`
	// Budget is the share of Limit syncd may spend, in (0, 1]; 0 means
	// syncd keeps no budget of its own below the system's limit.
	Budget float64 `json:"budget,omitempty"`
	// ResetAt is when the allowance renews; zero when unknown.
	ResetAt time.Time `json:"resetAt,omitzero"`
	// ObservedAt is when the figures were read.
	ObservedAt time.Time `json:"observedAt,omitzero"`
}

// Remaining is what is left of the allowance: of syncd's budget when it
// keeps one, else of the limit; -1 when the limit is unknown.
func (q Quota) Remaining() int64 {
	if q.Limit <= 0 {
		return -1
	}
	allowed := q.Limit
	if q.Budget > 0 && q.Budget < 1 {
		allowed = int64(float64(q.Limit) * q.Budget)
	}
	return max(allowed-q.Used, 0)
}

// QuotaReporter is implemented by sources whose system reports its API
// allowance (rate-limit headers, a limits endpoint).
type QuotaReporter interface {
	// Quotas returns the allowances as last seen, empty before the first
	// call to the system. It is safe for concurrent use and makes no call.
	Quotas() []Quota
}

// ErrBudgetSpent is returned (wrapped) by Changes, Snapshot or Write when
// the connector's share of its system's API allowance is spent. It is not
// a failure: the pass ends early, keeping the checkpoint of what it
// recorded, and the next scheduled pass resumes from there.
var ErrBudgetSpent = errors.New("api budget spent")
