// Package changehook is what the connectors that take their system's
// change webhooks share (connector.WebhookSource): the HTTP handler that
// reads a delivery, has the connector verify it as its system documents,
// answers it, and on success tells the connector's NotifyChanges; the
// payload is never read as data. Each connector keeps only its system's
// verification (HubSpot's v3 signature, Pipedrive's Basic credentials).
package changehook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
)

// MaxBody is the largest delivery read: HubSpot sends at most 100
// events per request, Pipedrive one; both are far below it.
const MaxBody = 1 << 20

// ErrRefused wraps every reason a Verifier refuses a delivery.
var ErrRefused = errors.New("webhook delivery refused")

// Verifier checks one delivery (its request, its whole body, the time
// it arrived) and returns nil when it comes from the system, an error
// wrapping ErrRefused that says why not otherwise. It must not log
// secrets in its error.
type Verifier func(r *http.Request, body []byte, now time.Time) error

// Hint carries "the system says something changed" from the handler to
// the connector's NotifyChanges. Its zero value is ready; it is safe for
// concurrent use.
//
// A delivery (Delivered) notifies at once when none came in the last
// Settle, and in any case arms one trailing notification Settle after
// the last delivery of a burst (at most MaxDefer after its first): a
// system's webhook can come before its API shows the change (a search
// index, a read window that ends before the clock), and the trailing
// pass reads what the first one could not yet see. A burst is therefore
// two passes: one at once, one once it has settled.
type Hint struct {
	// Settle is how long after a burst's last delivery the trailing
	// notification comes; 0 sends none (every delivery notifies at once).
	Settle time.Duration

	mu        sync.Mutex
	listeners map[int]func()
	next      int
	timer     *time.Timer // the trailing notification, while armed
	first     time.Time   // the first delivery of the armed burst
}

// MaxDefer bounds how long steady deliveries put off the trailing
// notification.
const MaxDefer = 30 * time.Second

// Delivered records a verified delivery (see Hint).
func (h *Hint) Delivered(now time.Time) {
	if h.Settle <= 0 {
		h.Notify()
		return
	}
	h.mu.Lock()
	if h.timer != nil {
		if now.Sub(h.first) < MaxDefer-h.Settle {
			h.timer.Reset(h.Settle) // debounced: the burst goes on
		}
		h.mu.Unlock()
		return
	}
	h.first = now
	h.timer = time.AfterFunc(h.Settle, func() {
		h.mu.Lock()
		h.timer = nil
		h.mu.Unlock()
		h.Notify()
	})
	h.mu.Unlock()
	h.Notify()
}

// Notify calls every waiting listener. Listeners coalesce (the daemon's
// trigger holds one pass), so a burst costs nothing here.
func (h *Hint) Notify() {
	h.mu.Lock()
	fns := make([]func(), 0, len(h.listeners))
	for _, fn := range h.listeners {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Wait calls changed on every Notify until ctx ends, then returns nil:
// the body of a connector's NotifyChanges.
func (h *Hint) Wait(ctx context.Context, changed func()) error {
	h.mu.Lock()
	if h.listeners == nil {
		h.listeners = map[int]func(){}
	}
	id := h.next
	h.next++
	h.listeners[id] = changed
	h.mu.Unlock()
	<-ctx.Done()
	h.mu.Lock()
	delete(h.listeners, id)
	h.mu.Unlock()
	return nil
}

// Handler returns the handler of a connector's deliveries: POST only
// (405), a body up to MaxBody (413), verify (401 with no notification
// when it fails), then 200 and hint.Delivered. now is the clock (nil:
// time.Now).
func Handler(verify Verifier, hint *Hint, now func() time.Time, log *logrus.Entry) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		arrived := now()
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		if len(body) > MaxBody {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := verify(r, body, arrived); err != nil {
			log.WithError(err).WithField(logfield.Remote, r.RemoteAddr).Warn("change webhook refused")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		hint.Delivered(arrived)
		w.WriteHeader(http.StatusOK)
	})
}

// Endpoint is a connector's change webhook: the handler of the vendor's
// deliveries and the hint they raise. Embedded in a connector's Source it
// gives NotifyChanges and NotifyMode (connector.ChangeNotifier) and
// Webhook (connector.WebhookSource); its zero value is webhooks off,
// which notifies nothing and serves no handler.
type Endpoint struct {
	handler http.Handler
	hint    Hint
}

// Open turns the endpoint on: a delivery that verify accepts starts a
// pass at once, and a burst's trailing pass follows settle after it.
func (e *Endpoint) Open(verify Verifier, settle time.Duration, log *logrus.Entry) {
	e.hint.Settle = settle
	e.handler = Handler(verify, &e.hint, nil, log)
}

// NotifyChanges calls changed after each verified delivery, until ctx
// ends (connector.ChangeNotifier). With webhooks off it only waits.
func (e *Endpoint) NotifyChanges(ctx context.Context, changed func()) error {
	return e.hint.Wait(ctx, changed)
}

// NotifyMode is "webhooks", or "" when webhooks are off.
func (e *Endpoint) NotifyMode() string {
	if e.handler == nil {
		return ""
	}
	return "webhooks"
}

// Webhook returns the handler of the deliveries, nil when webhooks are
// off (connector.WebhookSource).
func (e *Endpoint) Webhook() http.Handler { return e.handler }
