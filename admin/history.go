package admin

import (
	"context"
	"time"

	"github.com/syncd-io/syncd/state"
)

// History is what the health page charts over the last day.
type History struct {
	// Since is the start of the span.
	Since time.Time `json:"since"`
	// QuotaPerMinute is the workspace API calls the configuration allows a
	// minute (workspace.rateLimit × 60).
	QuotaPerMinute float64 `json:"quotaPerMinute"`
	// Minutes are the recorded minutes, oldest first.
	Minutes []state.HistoryPoint `json:"minutes"`
	// Passes are the finished passes, oldest first.
	Passes []Run `json:"passes"`
}

// HistoryReader is implemented by daemons that keep a history for the
// health page's charts; the page shows no chart for others.
type HistoryReader interface {
	History(ctx context.Context, since time.Time) (History, error)
}
