package changehook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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
			Handler(verify, &h, nil, quiet()).ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d", w.Code, tc.status)
			}
			if got := n.Load(); got != tc.notified {
				t.Errorf("%d notifications, want %d", got, tc.notified)
			}
		})
	}
}

// A burst of deliveries is one notification at once and one trailing,
// Settle after the last.
func TestDeliveredBurstIsTwoNotifications(t *testing.T) {
	h := Hint{Settle: 200 * time.Millisecond}
	n := listen(t, &h)
	start := time.Now()
	for range 500 {
		h.Delivered(time.Now())
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("%d notifications during the burst, want 1 (at once)", got)
	}
	time.Sleep(100 * time.Millisecond)
	h.Delivered(time.Now()) // the burst goes on: the trailing one moves
	time.Sleep(150 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d notifications 150 ms after the last delivery, want still 1", got)
	}
	deadline := time.Now().Add(2 * time.Second)
	for n.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := n.Load(); got != 2 {
		t.Fatalf("%d notifications after the burst settled, want 2", got)
	}
	t.Logf("burst of 501 deliveries: 2 notifications, the trailing one %v after the first", time.Since(start).Round(time.Millisecond))
	// A later delivery notifies at once again.
	h.Delivered(time.Now())
	if got := n.Load(); got != 3 {
		t.Errorf("%d notifications after a delivery following a quiet spell, want 3", got)
	}
}
