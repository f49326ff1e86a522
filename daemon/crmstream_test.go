package daemon_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A steady stream of CRM edits, one every half second, arrives one by
// one: each edit is in the workspace within 2 s of being made, through
// the CRM test server's real webhook deliveries and the daemon, at the
// connectors' default settings (HubSpot's target URL with a query
// string); and on HubSpot too when its search index shows changes 10 s
// late. Before, each delivery only put the next pass off (3 s, up to
// 30 s): the stream arrived all at once, seconds after its last edit;
// and Pipedrive's pass read only up to 5 s before the clock.
func TestCRMWebhookSteadyStream(t *testing.T) {
	const edits, gap, within = 20, 500 * time.Millisecond, 2 * time.Second
	type variant struct {
		name string
		c    crmCase
		lag  time.Duration
	}
	var variants []variant
	for _, c := range crmCases {
		variants = append(variants, variant{c.name, c, 0})
	}
	variants = append(variants, variant{"hubspot search 10 s late", crmCases[0], 10 * time.Second})
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			e := startHookEnv(t, v.c, edits)
			if v.lag > 0 {
				e.hook.lagSearch(v.lag)
			}
			w := watchStream(e, edits)
			began := time.Now()
			made := make([]time.Time, edits)
			for i := range edits {
				if wait := time.Until(began.Add(time.Duration(i) * gap)); wait > 0 {
					time.Sleep(wait) // the stream's pace, not a wait for the system
				}
				made[i] = time.Now()
				e.hook.edit(i, streamName(i))
			}
			waitUntil(t, 30*time.Second, "every edit in the workspace", func() bool { return w.count() == edits })
			arrived := w.stop()
			var lat []time.Duration
			for i := range edits {
				d := arrived[i].Sub(made[i])
				lat = append(lat, d)
				if d > within {
					t.Errorf("edit %d (made +%v) arrived after %v, want within %v", i, made[i].Sub(began).Round(time.Millisecond), d.Round(time.Millisecond), within)
				}
			}
			slices.Sort(lat)
			t.Logf("%d edits %v apart: latency median %v, max %v; %d passes", edits, gap,
				lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), len(e.runsSince(began)))
		})
	}
}

func streamName(i int) string { return fmt.Sprintf("Stream%02d", i) }

// streamWatch records when each stream edit first shows in the
// workspace.
type streamWatch struct {
	mu      sync.Mutex
	arrived []time.Time
	done    chan struct{}
	stopped chan struct{}
}

func watchStream(e *hookEnv, n int) *streamWatch {
	w := &streamWatch{arrived: make([]time.Time, n), done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			now := time.Now()
			for _, c := range e.emu.Contacts() {
				ln := c.DefaultFields.LastName
				if ln == nil || !strings.HasPrefix(*ln, "Stream") {
					continue
				}
				var i int
				if _, err := fmt.Sscanf(*ln, "Stream%02d", &i); err != nil || i < 0 || i >= n {
					continue
				}
				w.mu.Lock()
				if w.arrived[i].IsZero() {
					w.arrived[i] = now
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *streamWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, a := range w.arrived {
		if !a.IsZero() {
			n++
		}
	}
	return n
}

// stop ends the watch and returns when each edit arrived.
func (w *streamWatch) stop() []time.Time {
	close(w.done)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.arrived)
}

// Persons changed in Pipedrive a second before the daemon starts, inside
// the read window's look-back (5 s), are in the workspace after the
// start-up pass alone (the schedule is hourly, and no webhook announced
// them). Before, the start-up pass's window ended 5 s before the clock
// and they waited for the next pass.
func TestCRMStartupPassReadsTheLookback(t *testing.T) {
	e := startHookEnv(t, pipedriveCase(time.Second), 5)
	if runs := e.runsSince(time.Time{}); len(runs) != 1 {
		t.Errorf("%d passes, want the start-up pass alone", len(runs))
	}
}
