// Package changehook is what the connectors that take their system's
// change webhooks share (connector.WebhookSource): the HTTP handler that
// reads a delivery, has the connector verify it as its system documents,
// answers it, and on success tells the connector's NotifyChanges, at most
// about once a second however many deliveries come. The payload is never
// read as data: at most the ids of the records it names are kept, for the
// pass to read them through the API. Each connector keeps only its
// system's verification (HubSpot's v3 signature, Pipedrive's Basic
// credentials) and what it reads of the payload.
package changehook

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
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

// Announcer returns the ids of the records a verified delivery says
// changed (nil when it names none, or cannot be read). They are hints to
// read those records through the API, never data.
type Announcer func(body []byte) []string

// MaxAnnounced bounds the ids a Hint holds between two passes; those
// announced beyond it are left to the pass's window.
const MaxAnnounced = 500

// Hint carries "the system says something changed" from the handler to
// the connector's NotifyChanges. Its zero value is ready; it is safe for
// concurrent use.
//
// A delivery (Delivered) notifies at once when the last notification is
// at least Interval old, else as soon as it is (one notification for all
// the deliveries meanwhile): a steady stream of deliveries starts a pass
// about every Interval, each change read within Interval of its
// delivery, and a burst is a few passes, not one each. A system's API
// can show a change some time after its webhook (a search index), so a
// delivery also arms one trailing notification Settle after the last
// delivery of a burst.
type Hint struct {
	// Interval is the least time between two notifications of
	// deliveries; 0 notifies every delivery at once.
	Interval time.Duration
	// Settle is how long after a burst's last delivery the trailing
	// notification comes; 0 sends none.
	Settle time.Duration

	mu        sync.Mutex
	listeners map[int]func()
	next      int
	last      time.Time   // the last notification of deliveries
	due       *time.Timer // the throttled notification, while armed
	settle    *time.Timer // the trailing notification, while armed
	settleGen int         // which armed trailing notification is current
	delivered bool        // a delivery since TakeDelivered
	announced map[string]bool
}

// Delivered records a verified delivery (see Hint).
func (h *Hint) Delivered(now time.Time) {
	h.mu.Lock()
	h.delivered = true
	if h.Settle > 0 {
		if h.settle != nil {
			h.settle.Stop()
		}
		h.settleGen++
		gen := h.settleGen
		h.settle = time.AfterFunc(h.Settle, func() { h.notifyDeliveries(func() bool { return gen == h.settleGen }) })
	}
	if h.due != nil {
		h.mu.Unlock() // the armed notification covers this delivery
		return
	}
	if wait := h.Interval - now.Sub(h.last); wait > 0 && !h.last.IsZero() {
		h.due = time.AfterFunc(wait, func() { h.notifyDeliveries(nil) })
		h.mu.Unlock()
		return
	}
	h.last = now
	h.mu.Unlock()
	h.Notify()
}

// notifyDeliveries is a timer's notification: the throttled one (current
// nil) or the trailing one (current reports whether it still is).
func (h *Hint) notifyDeliveries(current func() bool) {
	h.mu.Lock()
	if current != nil {
		if !current() {
			h.mu.Unlock()
			return
		}
		h.settle = nil
	} else {
		h.due = nil
	}
	h.last = time.Now()
	h.mu.Unlock()
	h.Notify()
}

// Announce records the ids a verified delivery named, up to
// MaxAnnounced waiting.
func (h *Hint) Announce(ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if len(h.announced) >= MaxAnnounced {
			return
		}
		if h.announced == nil {
			h.announced = map[string]bool{}
		}
		h.announced[id] = true
	}
}

// TakeAnnounced returns the ids announced since the last call, sorted,
// and forgets them: the pass that takes them reads them.
func (h *Hint) TakeAnnounced() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.announced))
	for id := range h.announced {
		ids = append(ids, id)
	}
	h.announced = nil
	slices.Sort(ids)
	return ids
}

// TakeDelivered reports whether a delivery was verified since the last
// call: a change was announced that a read made now sees.
func (h *Hint) TakeDelivered() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.delivered
	h.delivered = false
	return d
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
// when it fails), then 200, hint.Announce of what announce finds in the
// body (when announce is not nil) and hint.Delivered. now is the clock
// (nil: time.Now).
func Handler(verify Verifier, announce Announcer, hint *Hint, now func() time.Time, log *logrus.Entry) http.Handler {
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
		if announce != nil {
			hint.Announce(announce(body))
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

// MinInterval is the least time between two passes deliveries start.
const MinInterval = time.Second

// Open turns the endpoint on: a delivery that verify accepts starts a
// pass within MinInterval, the ids announce finds in it (announce may be
// nil) wait for TakeAnnounced, and a burst's trailing pass follows
// settle after it.
func (e *Endpoint) Open(verify Verifier, announce Announcer, settle time.Duration, log *logrus.Entry) {
	e.hint.Interval, e.hint.Settle = MinInterval, settle
	e.handler = Handler(verify, announce, &e.hint, nil, log)
}

// TakeAnnounced returns the record ids the deliveries verified since the
// last call named, and forgets them: the pass that takes them reads
// them (Hint.TakeAnnounced).
func (e *Endpoint) TakeAnnounced() []string { return e.hint.TakeAnnounced() }

// Reannounce puts back ids taken by a pass that could not read them.
func (e *Endpoint) Reannounce(ids []string) { e.hint.Announce(ids) }

// TakeDelivered reports whether a delivery was verified since the last
// call (Hint.TakeDelivered).
func (e *Endpoint) TakeDelivered() bool { return e.hint.TakeDelivered() }

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
