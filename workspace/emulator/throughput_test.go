//go:build unix

package emulator

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the processor time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestThroughput: 20 concurrent clients create contacts over real
// connections. The emulator must sustain well over 100 requests per second
// on one core: checked as processor time per request (clients, server and
// race detector included), which, unlike wall time, does not depend on
// what else the machine runs.
func TestThroughput(t *testing.T) {
	e := New(Options{APIKey: "k", Rate: -1})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	defer e.Close()
	const workers, each = 20, 25
	start, cpuStart := time.Now(), cpuTime(t)
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body := fmt.Sprintf(`{"defaultFields":{"firstName":"w%d-%d"},"externalId":"w%d-%d"}`, w, i, w, i)
				req, _ := http.NewRequest("POST", srv.URL+"/v1/contacts", strings.NewReader(body))
				req.Header.Set("Authorization", "k")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != 201 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	perRequest := (cpuTime(t) - cpuStart) / (workers * each)
	if perRequest > 5*time.Millisecond {
		t.Errorf("%v of processor time per request, want under 5ms (200 requests/s on one core)", perRequest)
	}
	if got := len(e.Contacts()); got != workers*each {
		t.Errorf("%d contacts, want %d", got, workers*each)
	}
	t.Logf("%v processor time per request; %.0f requests/s on this machine now", perRequest, float64(workers*each)/time.Since(start).Seconds())
}
