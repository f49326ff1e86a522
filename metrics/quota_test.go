package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/reconcile"
)

func TestScrapeQuotas(t *testing.T) {
	m := New("test")
	if out := scrape(t, m); strings.Contains(out, "syncd_api_quota") {
		t.Fatal("quota gauges served before any connector reports one")
	}
	m.SetQuotas(func() []ConnectorQuota {
		return []ConnectorQuota{
			{Connector: "sf", Quota: connector.Quota{Name: "daily API requests", Used: 7400, Limit: 15000, Budget: 0.5}},
			{Connector: "pd", Quota: connector.Quota{Name: "token budget", Used: 12}},
		}
	})
	out := scrape(t, m)
	for _, want := range []string{
		`syncd_api_quota_used{connector="sf",quota="daily API requests"} 7400`,
		`syncd_api_quota_limit{connector="sf",quota="daily API requests"} 15000`,
		`syncd_api_quota_budget_ratio{connector="sf",quota="daily API requests"} 0.5`,
		`syncd_api_quota_used{connector="pd",quota="token budget"} 12`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	for _, unwanted := range []string{`syncd_api_quota_limit{connector="pd"`, `syncd_api_quota_budget_ratio{connector="pd"`} {
		if strings.Contains(out, unwanted) {
			t.Errorf("scrape has %q for a quota without a known limit or budget", unwanted)
		}
	}
}

func TestObserveRunStoppedAtBudget(t *testing.T) {
	m := New("test")
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	err := fmt.Errorf("read changes: %w", connector.ErrBudgetSpent)
	m.ObserveRun(reconcile.Summary{Connector: "sf", Kind: "run", Created: 5, Stopped: "budget"}, err, t1)
	if got := testutil.ToFloat64(m.runs.WithLabelValues("sf", "run", "budget")); got != 1 {
		t.Errorf("runs{result=budget} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("sf", "run", "error")); got != 0 {
		t.Errorf("runs{result=error} = %v, want 0: a budget stop is not a failure", got)
	}
	if got := testutil.ToFloat64(m.lastSuccess.WithLabelValues("sf")); got != 0 {
		t.Errorf("last success = %v, want unset: the pass did not finish", got)
	}
}
