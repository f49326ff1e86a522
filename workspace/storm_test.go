package workspace_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/syncd-io/syncd/internal/remote"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestStormOf429sAdaptsTheRate is issue 23's "storm of 429s": syncd set
// to 50/s against a workspace whose key allows 5/s. Before the adaptive
// rate, 54% of the calls were answered 429 (a short pause, the rate never
// lowered). The client must lower its rate on the run of 429s, keep fewer
// than a fifth of its calls throttled over the storm, say so in the log
// (a warning naming the new rate) and in remote.Rates (the health page's
// "API rate" line), and still get the service's rate's worth done.
func TestStormOf429sAdaptsTheRate(t *testing.T) {
	const (
		key        = "storm-test-key"
		configured = 50
		allowed    = 5
		workers    = 8
		duration   = 12 * time.Second
	)
	srv := emulator.NewServer(emulator.Options{APIKey: key, Rate: allowed, Burst: allowed})
	defer srv.Close()

	log, hook := test.NewNullLogger()
	c, err := workspace.NewClient(workspace.ClientOptions{
		BaseURL:    srv.URL,
		APIKey:     key,
		RateLimit:  configured,
		Burst:      10,
		MaxRetries: 20,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Log:        logrus.NewEntry(log),
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := c.CreateContact(context.Background(), workspace.ContactCreate{
		DefaultFields: workspace.DefaultFieldsInput{FirstName: "Storm"}, ExternalID: "storm-1", Source: "custom-storm",
	})
	if err != nil {
		t.Fatal(err)
	}
	before := srv.Stats()
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				// A wait that would outlast the storm ends early: not a failure.
				if _, err := c.GetContact(ctx, ct.ID); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("call failed: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	after := srv.Stats()
	total := sum(after.Requests) - sum(before.Requests)
	throttled := after.Throttled - before.Throttled
	share := float64(throttled) / float64(total)
	served := float64(total-throttled) / duration.Seconds()
	t.Logf("storm: %d requests, %d answered 429 (%.1f%%), %.2f/s served (service allows %d/s, syncd set to %d/s); limiter now %.2f/s",
		total, throttled, share*100, served, allowed, configured, float64(c.Limiter().Limit()))
	if share >= 0.2 {
		t.Errorf("%.1f%% of the calls were answered 429, want under a fifth", share*100)
	}
	if served < 0.6*allowed {
		t.Errorf("only %.2f calls/s served, want at least %.1f/s of the service's %d/s", served, 0.6*allowed, allowed)
	}
	if got := float64(c.Limiter().Limit()); got >= configured/2 {
		t.Errorf("limiter at %.2f/s after the storm, want it lowered well below the configured %d/s", got, configured)
	}
	var lowered bool
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && e.Message == "api answers 429 again and again; rate lowered" {
			lowered = e.Data["configured"] == float64(configured) && e.Data["api"] != ""
		}
	}
	if !lowered {
		t.Error("no warning says the rate was lowered, with the configured rate and the API")
	}
	var shown bool
	for _, r := range remote.Rates() {
		if r.Configured == configured && r.Limit < configured && r.Throttled > 0 && r.Cuts > 0 {
			shown = true
		}
	}
	if !shown {
		t.Errorf("remote.Rates() = %+v, want the lowered workspace rate with its cuts", remote.Rates())
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
