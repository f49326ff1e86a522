package changehook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func quiet() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}

// listen counts h's notifications until the test ends.
func listen(t *testing.T, h *Hint) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.Wait(ctx, func() { n.Add(1) }); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for { // Wait has registered once a Notify reaches it
		h.Notify()
		if n.Load() > 0 {
			n.Store(0)
			return &n
		}
		time.Sleep(time.Millisecond)
	}
}

func TestHandler(t *testing.T) {
	verify := func(r *http.Request, body []byte, _ time.Time) error {
		if r.Header.Get("X-Key") != "right" {
			return errors.New("refused: wrong key")
		}
		return nil
	}
	for _, tc := range []struct {
		name     string
		method   string
		key      string
		body     string
		status   int
		notified int64
	}{
		{"verified", http.MethodPost, "right", "{}", http.StatusOK, 1},
		{"forged", http.MethodPost, "wrong", "{}", http.StatusUnauthorized, 0},
		{"not a POST", http.MethodGet, "right", "", http.StatusMethodNotAllowed, 0},
		{"too large", http.MethodPost, "right", strings.Repeat("x", MaxBody+1), http.StatusRequestEntityTooLarge, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Hint
			n := listen(t, &h)
			r := httptest.NewRequest(tc.method, "/webhooks/connectors/crm", bytes.NewReader([]byte(tc.body)))
			r.Header.Set("X-Key", tc.key)
			w := httptest.NewRecorder()
			Handler(verify, nil, &h, nil, quiet()).ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := n.Load(); got != tc.notified {
				t.Errorf("%d notifications, want %d", got, tc.notified)
			}
		})
	}
}

// notifications records when h notifies, until the test ends.
type notifications struct {
	mu sync.Mutex
	at []time.Time
}

func record(t *testing.T, h *Hint) *notifications {
	t.Helper()
	n := &notifications{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ready := make(chan struct{}, 1)
	go func() {
		_ = h.Wait(ctx, func() {
			n.mu.Lock()
			n.at = append(n.at, time.Now())
			n.mu.Unlock()
			select {
			case ready <- struct{}{}:
			default:
			}
		})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for { // Wait has registered once a Notify reaches it
		h.Notify()
		select {
		case <-ready:
			n.mu.Lock()
			n.at = nil
			n.mu.Unlock()
			return n
		case <-time.After(time.Millisecond):
		}
	}
}

func (n *notifications) times() []time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]time.Time(nil), n.at...)
}

// waitCount waits until n holds want notifications (at most 5 s).
func (n *notifications) waitCount(t *testing.T, want int) []time.Time {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(n.times()) < want && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	return n.times()
}

// A steady stream of deliveries notifies about once an Interval, each
// delivery within an Interval of its arrival (not once the stream
// stops), and the trailing notification Settle after the last.
func TestDeliveredSteadyStream(t *testing.T) {
	const interval, settle, gap, count = 200 * time.Millisecond, 300 * time.Millisecond, 50 * time.Millisecond, 30
	h := Hint{Interval: interval, Settle: settle}
	n := record(t, &h)
	var sent []time.Time
	for range count {
		now := time.Now()
		sent = append(sent, now)
		h.Delivered(now)
		time.Sleep(gap)
	}
	last := sent[len(sent)-1]
	got := n.waitCount(t, 1)
	deadline := time.Now().Add(5 * time.Second)
	for (len(got) == 0 || got[len(got)-1].Before(last.Add(settle))) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		got = n.times()
	}
	span := last.Sub(sent[0])
	if max := int(span/interval) + 3; len(got) > max {
		t.Errorf("%d notifications for %d deliveries over %v, want at most %d (one an interval, and the trailing one)", len(got), count, span.Round(time.Millisecond), max)
	}
	const slack = 150 * time.Millisecond // a loaded machine's timers
	for i, d := range sent {
		j := sort.Search(len(got), func(j int) bool { return !got[j].Before(d) })
		if j == len(got) || got[j].Sub(d) > interval+slack {
			t.Fatalf("delivery %d at +%v: no notification within %v", i, d.Sub(sent[0]).Round(time.Millisecond), interval+slack)
		}
	}
	if trailing := got[len(got)-1].Sub(last); trailing < settle || trailing > settle+slack {
		t.Errorf("the last notification %v after the last delivery, want the trailing one %v after it", trailing.Round(time.Millisecond), settle)
	}
	t.Logf("%d deliveries %v apart: %d notifications", count, gap, len(got))
}

// A burst of deliveries is a few notifications: one at once, one an
// Interval later for the rest, and the trailing one Settle after the
// last; a delivery after a quiet spell notifies at once again.
func TestDeliveredBurstIsAFewNotifications(t *testing.T) {
	h := Hint{Interval: 100 * time.Millisecond, Settle: 300 * time.Millisecond}
	n := record(t, &h)
	for range 500 {
		h.Delivered(time.Now())
	}
	if got := len(n.times()); got != 1 {
		t.Fatalf("%d notifications during the burst, want 1 (at once)", got)
	}
	got := n.waitCount(t, 3)
	if len(got) != 3 {
		t.Fatalf("%d notifications after the burst, want 3", len(got))
	}
	time.Sleep(200 * time.Millisecond) // nothing more is due
	if got := len(n.times()); got != 3 {
		t.Fatalf("%d notifications once settled, want 3", got)
	}
	h.Delivered(time.Now())
	if got := len(n.times()); got != 4 {
		t.Errorf("%d notifications after a delivery following a quiet spell, want 4 (at once)", got)
	}
}

// Announced ids wait for the pass that takes them, once each, at most
// MaxAnnounced of them.
func TestAnnounced(t *testing.T) {
	var h Hint
	h.Announce([]string{"7", "3"})
	h.Announce([]string{"3", "12"})
	if got := h.TakeAnnounced(); !slices.Equal(got, []string{"12", "3", "7"}) {
		t.Errorf("taken %v, want 12 3 7", got)
	}
	if got := h.TakeAnnounced(); len(got) != 0 {
		t.Errorf("taken again %v, want none", got)
	}
	many := make([]string, MaxAnnounced+10)
	for i := range many {
		many[i] = strconv.Itoa(i)
	}
	h.Announce(many)
	if got := len(h.TakeAnnounced()); got != MaxAnnounced {
		t.Errorf("%d ids kept, want %d", got, MaxAnnounced)
	}
	if h.TakeDelivered() {
		t.Error("delivered before any delivery")
	}
	h.Delivered(time.Now())
	if !h.TakeDelivered() || h.TakeDelivered() {
		t.Error("TakeDelivered: want true once after a delivery")
	}
}

// The handler keeps the ids a verified delivery announces, and none of a
// refused one.
func TestHandlerAnnounces(t *testing.T) {
	verify := func(r *http.Request, _ []byte, _ time.Time) error {
		if r.Header.Get("X-Key") != "right" {
			return ErrRefused
		}
		return nil
	}
	announce := func(body []byte) []string { return strings.Fields(string(body)) }
	var h Hint
	for _, key := range []string{"wrong", "right"} {
		r := httptest.NewRequest(http.MethodPost, "/webhooks/connectors/crm", strings.NewReader(key+"-1 "+key+"-2"))
		r.Header.Set("X-Key", key)
		Handler(verify, announce, &h, nil, quiet()).ServeHTTP(httptest.NewRecorder(), r)
	}
	if got := h.TakeAnnounced(); !slices.Equal(got, []string{"right-1", "right-2"}) {
		t.Errorf("announced %v, want the verified delivery's right-1 right-2", got)
	}
}
