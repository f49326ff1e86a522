package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestLoadAgainstEmulator is the load test through the real
// emulator: 20 goroutines share one client for 4 s against an emulator
// whose token bucket has the client's own limit (50/s, burst 10), reading
// and patching a contact. The emulator's stats must show at most a
// handful of 429s, and the requests it served at least 90% of the limit.
func TestLoadAgainstEmulator(t *testing.T) {
	const (
		key      = "load-test-key"
		limit    = 50
		burst    = 10
		workers  = 20
		duration = 4 * time.Second
		max429   = 5
	)
	srv := emulator.NewServer(emulator.Options{APIKey: key, Rate: limit, Burst: burst})
	defer srv.Close()

	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	c, err := workspace.NewClient(workspace.ClientOptions{
		BaseURL:    srv.URL,
		APIKey:     key,
		RateLimit:  limit,
		Burst:      burst,
		HTTPClient: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}},
		Log:        logrus.NewEntry(log),
	})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := c.CreateContact(context.Background(), workspace.ContactCreate{
		DefaultFields: workspace.DefaultFieldsInput{FirstName: "Load"},
		ExternalID:    "load-1",
		Source:        "custom-load",
	})
	if err != nil {
		t.Fatal(err)
	}

	// Requests start only inside the window; the throughput is what the
	// emulator served over the window, so that requests still in flight
	// when it closes do not count as time lost by the limiter.
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	var failures atomic.Int64
	var firstFailure sync.Once
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				var err error
				if i%2 == 0 {
					_, err = c.GetContact(ctx, ct.ID)
				} else {
					_, err = c.UpdateContact(ctx, ct.ID, workspace.ContactPatch{
						DefaultFields: &workspace.DefaultFieldsPatch{Role: workspace.Some(fmt.Sprintf("worker %d call %d", w, i))},
					})
				}
				// A call may end early with DeadlineExceeded when its
				// limiter wait would outlast the test: not a failure.
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					failures.Add(1)
					firstFailure.Do(func() { t.Errorf("call failed: %v", err) })
				}
			}
		})
	}
	wg.Wait()

	st := srv.Stats()
	total := 0
	for _, n := range st.Requests {
		total += n
	}
	served := total - st.Throttled - 1 // the create came before the clock started
	perSec := float64(served) / duration.Seconds()
	t.Logf("emulator: %d requests, %d throttled, %.1f/s served in %v (limit %d/s); client calls %d",
		total, st.Throttled, perSec, duration, limit, c.Calls())
	if st.Throttled > max429 {
		t.Errorf("emulator throttled %d requests, want at most %d", st.Throttled, max429)
	}
	if perSec < 0.9*limit {
		t.Errorf("throughput %.1f/s, want at least %.1f/s", perSec, 0.9*limit)
	}
	// Attempts cut off by the deadline may not have reached the emulator.
	if calls := c.Calls(); int64(total) > calls || calls > int64(total+workers) {
		t.Errorf("emulator saw %d requests, client made %d attempts", total, calls)
	}
	if failures.Load() > 0 {
		t.Errorf("%d calls failed", failures.Load())
	}
}
