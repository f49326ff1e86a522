package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace"
)

func TestObserveRequest(t *testing.T) {
	m := New("test")
	m.ObserveRequest(workspace.RequestInfo{Route: workspace.RouteCreateContact, Status: 201, Duration: 20 * time.Millisecond, LimiterWait: 1500 * time.Millisecond})
	m.ObserveRequest(workspace.RequestInfo{Route: workspace.RouteCreateContact, Status: 429, LimiterWait: 500 * time.Millisecond})
	m.ObserveRequest(workspace.RequestInfo{Route: workspace.RouteCreateContact, Status: 201})
	m.ObserveRequest(workspace.RequestInfo{Route: workspace.RouteUpdateContact, Status: 0, Err: errors.New("connection reset")})

	tests := []struct {
		name         string
		route, label string
		want         float64
	}{
		{"created twice", workspace.RouteCreateContact, "201", 2},
		{"throttled once", workspace.RouteCreateContact, "429", 1},
		{"no answer is error", workspace.RouteUpdateContact, "error", 1},
		{"unseen status", workspace.RouteUpdateContact, "200", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testutil.ToFloat64(m.requests.WithLabelValues(tt.route, tt.label)); got != tt.want {
				t.Errorf("requests{%s,%s} = %v, want %v", tt.route, tt.label, got, tt.want)
			}
		})
	}
	if got := testutil.ToFloat64(m.limiterWait); got != 2 {
		t.Errorf("limiter wait = %v s, want 2", got)
	}
	// Durations are observed only for answers: 3 of the 4 attempts.
	if got := testutil.CollectAndCount(m.requestDuration); got != 1 {
		t.Errorf("duration series = %d, want 1 (no series for a route without answers)", got)
	}
}

func TestObserveRun(t *testing.T) {
	m := New("test")
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	m.ObserveRun(reconcile.Summary{Connector: "crm", Kind: "run", Created: 3, Updated: 2, Unchanged: 10, Failed: 1, Duration: 2 * time.Second}, nil, t1)
	m.ObserveRun(reconcile.Summary{Connector: "crm", Kind: "run", Created: 1, Deleted: 4, Duration: time.Second}, errors.New("read changes: boom"), t2)

	for outcome, want := range map[string]float64{"created": 4, "updated": 2, "unchanged": 10, "deleted": 4, "failed": 1, "unlinked": 0} {
		if got := testutil.ToFloat64(m.records.WithLabelValues("crm", outcome)); got != want {
			t.Errorf("records{crm,%s} = %v, want %v", outcome, got, want)
		}
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("crm", "run", "ok")); got != 1 {
		t.Errorf("runs ok = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("crm", "run", "error")); got != 1 {
		t.Errorf("runs error = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.lastSuccess.WithLabelValues("crm")); got != float64(t1.Unix()) {
		t.Errorf("last success = %v, want %v (the failed pass must not move it)", got, t1.Unix())
	}
	if got := testutil.ToFloat64(m.lastRun.WithLabelValues("crm")); got != float64(t2.Unix()) {
		t.Errorf("last run = %v, want %v", got, t2.Unix())
	}
	// api_calls and duration are not outcomes.
	for _, notOutcome := range []string{"api_calls", "duration", "connector", "kind"} {
		if got := testutil.ToFloat64(m.records.WithLabelValues("crm", notOutcome)); got != 0 {
			t.Errorf("records{crm,%s} = %v, want no such outcome", notOutcome, got)
		}
	}
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("scrape status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestScrapeReadsStateAndWebhooks(t *testing.T) {
	m := New("v1.2.3")
	reads := 0
	var fail error
	m.SetStateGauges(func() (StateGauges, error) {
		reads++
		return StateGauges{Connectors: []ConnectorGauges{{Connector: "crm", Links: 42, DeadLetters: 3, Conflicts: 1, FieldWarnings: 2, MassDeleteRefused: true}, {Connector: "csv"}}, InboxPending: 7}, fail
	})
	m.SetWebhookStats(func() WebhookStats {
		return WebhookStats{Accepted: 5, Duplicates: 2, Refused: 1, Echoes: 4, PutOffs: 12, PutOffDeadLetters: 1,
			RefusedBy: map[string]int64{"no_contact": 1, "bad_signature": 0}}
	})

	out := scrape(t, m)
	for _, want := range []string{
		`syncd_links{connector="crm"} 42`,
		`syncd_dead_letters{connector="crm"} 3`,
		`syncd_conflicts{connector="crm"} 1`,
		`syncd_field_warnings{connector="crm"} 2`,
		`syncd_mass_delete_refused{connector="crm"} 1`,
		`syncd_mass_delete_refused{connector="csv"} 0`,
		`syncd_webhook_inbox_pending 7`,
		`syncd_webhook_deliveries_total{result="accepted"} 5`,
		`syncd_webhook_deliveries_total{result="duplicate"} 2`,
		`syncd_webhook_deliveries_total{result="refused"} 1`,
		`syncd_webhook_echoes_total 4`,
		`syncd_writeback_put_offs_total 12`,
		`syncd_writeback_put_off_dead_letters_total 1`,
		`syncd_webhook_refused_total{reason="no_contact"} 1`,
		`syncd_webhook_refused_total{reason="bad_signature"} 0`,
		`syncd_build_info{goversion="go`,
		`version="v1.2.3"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	scrape(t, m)
	if reads != 1 {
		t.Errorf("state read %d times for two quick scrapes, want 1 (cached)", reads)
	}

	// A failing read is counted and the gauges are left out.
	m.scrape.mu.Lock()
	m.scrape.cachedAt = time.Time{}
	m.scrape.mu.Unlock()
	fail = errors.New("state closed")
	out = scrape(t, m)
	if strings.Contains(out, "syncd_links{") {
		t.Error("gauges served after a failed state read")
	}
	if !strings.Contains(out, "syncd_state_read_errors_total 1") {
		t.Error("failed state read not counted")
	}
}

func TestScrapeWithoutSources(t *testing.T) {
	out := scrape(t, New("dev"))
	for _, absent := range []string{"syncd_links", "syncd_webhook_deliveries_total{"} {
		if strings.Contains(out, absent+"{") || strings.Contains(out, absent+" ") {
			t.Errorf("scrape without sources serves %s", absent)
		}
	}
}
