package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

func TestPageShowsQuotaAndBudgetStop(t *testing.T) {
	f := newFake()
	now := time.Now()
	f.status.Connectors = append(f.status.Connectors, ConnectorStatus{
		Name: "sf", Type: "salesforce", Source: "custom-salesforce", Direction: "both", Schedule: "@every 5m",
		LastRun: &Run{ID: 9, Run: state.Run{Connector: "sf", Kind: "run", StartedAt: now.Add(-time.Minute), FinishedAt: now,
			Created: 40, Err: "read changes: api budget spent", Stopped: state.StoppedBudget}},
		LastResult: "budget",
		Quotas:     []Quota{NewQuota(connector.Quota{Name: "daily API requests", Used: 7500, Limit: 15000, Budget: 0.5})},
	})
	html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String()
	row := html[strings.Index(html, `id="connector-sf"`):]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{
		`stopped: API budget spent`,
		`API daily API requests: 7500 of 15000 used · syncd's budget 50%, 0 left`,
	} {
		if !strings.Contains(row, want) {
			t.Errorf("connector row lacks %q:\n%s", want, row)
		}
	}
	if strings.Contains(row, `badge bad">error`) {
		t.Error("a pass stopped at its budget is shown as an error")
	}
}

func TestRunResult(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		run  state.Run
		want string
	}{
		{"finished", state.Run{StartedAt: now, FinishedAt: now}, "ok"},
		{"failed", state.Run{StartedAt: now, FinishedAt: now, Err: "read changes: boom"}, "error"},
		{"stopped at budget", state.Run{StartedAt: now, FinishedAt: now, Err: "api budget spent", Stopped: state.StoppedBudget}, "budget"},
		{"unfinished", state.Run{StartedAt: now}, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Run{Run: tc.run}).Result(); got != tc.want {
				t.Errorf("Result() = %q, want %q", got, tc.want)
			}
		})
	}
}
