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

// TestPrintStatusRefusedMassDelete: a refused mass delete is printed with
// the commands that act on it, whatever the last pass's result.
func TestPrintStatusRefusedMassDelete(t *testing.T) {
	now := time.Now()
	st := admin.Status{Connectors: []admin.ConnectorStatus{{
		Name: "db", Type: "postgres", Schedule: "@every 1h", LastResult: "ok",
		LastRun: &admin.Run{ID: 9, Run: state.Run{Kind: "run", StartedAt: now.Add(-time.Minute), FinishedAt: now}},
		RefusedDelete: &admin.RefusedDelete{
			RefusedDelete: state.RefusedDelete{At: now.Add(-time.Hour), Kind: "resync", Reason: "mass delete refused: this run would delete 40 of 40 linked contacts (100%)"},
			Command:       "syncd resync --config s.yaml --connector db --allow-mass-delete",
			Undo:          "syncd resync --config s.yaml --connector db",
		},
	}}}
	var b strings.Builder
	printStatus(&b, st, nil, now)
	for _, want := range []string{
		"db: MASS DELETE REFUSED 1h0m0s ago (resync): mass delete refused: this run would delete 40 of 40 linked contacts (100%)",
		"if the records are gone for good, run: syncd resync --config s.yaml --connector db --allow-mass-delete",
		"if they come back, a resync clears this: syncd resync --config s.yaml --connector db",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// TestPrintStatusNotice: what the daemon did by itself (a resync after a
// purged binlog) is printed under the table, with the mode's lag.
func TestPrintStatusNotice(t *testing.T) {
	now := time.Now()
	st := admin.Status{Connectors: []admin.ConnectorStatus{{
		Name: "shop", Type: "mysql", Schedule: "@every 1h", Mode: "binlog, 2 kB / 1s behind + poll every 1h", LastResult: "ok",
		LastRun: &admin.Run{ID: 4, Run: state.Run{Kind: "resync", StartedAt: now.Add(-time.Minute), FinishedAt: now}},
		Notice:  "resynced by itself at 2026-11-27T06:12:03Z: binlog mysql-bin.000012 was purged: resync needed",
	}}}
	var b strings.Builder
	printStatus(&b, st, nil, now)
	for _, want := range []string{
		"binlog, 2 kB / 1s behind + poll every 1h",
		"shop: resynced by itself at 2026-11-27T06:12:03Z: binlog mysql-bin.000012 was purged: resync needed",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}

// TestPrintStatusActivitiesPendingIsATotal: the activity queue is one for
// every connector, so its figure is printed once as a total, not as each
// connector's (two connectors showed the same "3 waiting").
func TestPrintStatusActivitiesPendingIsATotal(t *testing.T) {
	now := time.Now()
	st := admin.Status{ActivitiesPending: 3, Connectors: []admin.ConnectorStatus{
		{Name: "hs", Type: "hubspot", Activities: &admin.ActivityStatus{Logged: 5}},
		{Name: "db", Type: "postgres", Activities: &admin.ActivityStatus{Logged: 2, Failed: 1}},
	}}
	var b strings.Builder
	printStatus(&b, st, nil, now)
	out := b.String()
	for _, want := range []string{
		"call and text events waiting 3 (all connectors)",
		"hs: calls and texts: 5 logged, 0 updated, 0 skipped (no record has the number), 0 failed\n",
		"db: calls and texts: 2 logged, 0 updated, 0 skipped (no record has the number), 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "waiting 3"); n != 1 {
		t.Errorf("the shared queue's figure is printed %d times, want once:\n%s", n, out)
	}
}
