package main

import (
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

func TestPrintStatusBudgetStopAndQuota(t *testing.T) {
	now := time.Now()
	st := admin.Status{Connectors: []admin.ConnectorStatus{{
		Name: "sf", Type: "salesforce", Schedule: "@every 5m", LastResult: "budget",
		LastRun: &admin.Run{ID: 3, Run: state.Run{Kind: "run", StartedAt: now.Add(-time.Minute), FinishedAt: now,
			Created: 12, Err: "read changes: api budget spent", Stopped: state.StoppedBudget}},
		Quotas: []admin.Quota{admin.NewQuota(connector.Quota{Name: "daily API requests", Used: 7400, Limit: 15000, Budget: 0.5})},
	}}}
	var b strings.Builder
	printStatus(&b, st, nil, now)
	out := b.String()
	for _, want := range []string{
		"budget (12 created, 0 updated, 0 deleted, 0 failed)",
		"sf: last run stopped at the API budget; the next scheduled pass resumes it",
		"sf: API daily API requests: 7400 of 15000 used, 100 left of syncd's budget (50%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stopped early") {
		t.Errorf("a budget stop is reported as a failure:\n%s", out)
	}
}
