package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

// Delivery statuses of workspace.Delivery.Status.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// deliveryRec is one event to deliver to one webhook, with its history
// entry. Emulator.mu guards it.
type deliveryRec struct {
	d     workspace.Delivery
	body  []byte
	st    *state // the state it belongs to; a Reset makes it stale
	round int    // a manual retry starts a new round of attempts
	tries int    // attempts in the current round
}

func (r *deliveryRec) public() workspace.Delivery {
	d := r.d
	if d.NextAttemptAt != nil {
		t := *d.NextAttemptAt
		d.NextAttemptAt = &t
	}
	return d
}

// emitLocked records a delivery of event about contact c to every enabled
// webhook subscribed to it, and queues them in order. Emulator.mu is held.
func (e *Emulator) emitLocked(event string, c workspace.Contact) {
	s := e.state
	var evID string
	var resource []byte
	for _, id := range s.webhookOrder {
		wh := s.webhooks[id]
		if !wh.subscribes(event) {
			continue
		}
		if evID == "" {
			evID = s.hexID("EV", 16)
			resource, _ = json.Marshal(c)
		}
		e.queueLocked(wh, evID, event, resource)
	}
}

// queueLocked records and queues a delivery of one event to wh.
func (e *Emulator) queueLocked(wh *webhookRec, evID, event string, resource []byte) *deliveryRec {
	s := e.state
	now := e.now()
	body := e.envelope(wh, evID, event, now, resource)
	dl := &deliveryRec{st: s, body: body, d: workspace.Delivery{
		ID: s.hexID("WD", 8), WebhookID: wh.wh.ID, EventID: evID, Type: event,
		Status: DeliveryPending, CreatedAt: now, UpdatedAt: now,
	}}
	wh.deliveries = append(wh.deliveries, dl)
	wh.deliveryByID[dl.d.ID] = dl
	wh.deliveryByID[dl.d.EventID] = dl
	if len(wh.deliveries) > e.opts.HistoryLimit {
		old := wh.deliveries[0]
		wh.deliveries = wh.deliveries[1:]
		delete(wh.deliveryByID, old.d.ID)
		if wh.deliveryByID[old.d.EventID] == old {
			delete(wh.deliveryByID, old.d.EventID)
		}
	}
	e.deliver.enqueue(wh.wh.ID, dl, dl.round)
	e.maybeDuplicateLocked(wh, dl)
	return dl
}

// envelope encodes the delivery of one event about resource (a contact's
// JSON, or another resource's), in the shape of Options.WebhookEnvelope.
// The documented shape (the service's webhook guide): {id, object:
// "event", apiVersion (the webhook's, as the spec says webhooks record
// the version they deliver in), createdAt, type, data: {object: <the
// resource, with its own "object": "contact" for a contact>}}.
// createdAt is written as the guide shows it, with milliseconds always
// ("2022-06-24T19:35:46.825Z").
func (e *Emulator) envelope(wh *webhookRec, evID, event string, now time.Time, resource []byte) []byte {
	ev := struct {
		ID         string              `json:"id"`
		Object     string              `json:"object,omitempty"`
		APIVersion string              `json:"apiVersion"`
		CreatedAt  string              `json:"createdAt"`
		Type       string              `json:"type"`
		Data       workspace.EventData `json:"data"`
	}{ID: evID, APIVersion: wh.wh.APIVersion, CreatedAt: now.UTC().Format(createdAtLayout), Type: event}
	if e.opts.WebhookEnvelope == EnvelopeResource {
		ev.Data.Resource = resource
	} else {
		ev.Object = workspace.EventObject
		ev.Data.Object = resource
		if strings.HasPrefix(event, "contact.") {
			ev.Data.Object = tagObject(resource, workspace.ContactObject)
		}
	}
	body, _ := json.Marshal(ev)
	return body
}

// createdAtLayout is an envelope's createdAt: RFC 3339, UTC, milliseconds.
const createdAtLayout = "2006-01-02T15:04:05.000Z07:00"

// tagObject adds "object": kind first in the JSON object raw (raw as it
// is when it is not an object).
func tagObject(raw []byte, kind string) []byte {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '{' {
		return raw
	}
	rest := bytes.TrimSpace(t[1:])
	out := make([]byte, 0, len(t)+len(kind)+16)
	out = append(out, `{"object":`...)
	out = strconv.AppendQuote(out, kind)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// deliverer runs the attempts. First attempts of one webhook are made one
// at a time in the order the events happened; retries run from timers, so
// a retried event may arrive after later ones, as with the real service.
type deliverer struct {
	e      *Emulator
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex // never held while taking Emulator.mu
	queues  map[string][]queued
	running map[string]bool
	timers  map[*time.Timer]struct{}
	closed  bool
}

type queued struct {
	dl    *deliveryRec
	round int
}

func newDeliverer(e *Emulator) *deliverer {
	ctx, cancel := context.WithCancel(context.Background())
	return &deliverer{e: e, ctx: ctx, cancel: cancel, queues: map[string][]queued{},
		running: map[string]bool{}, timers: map[*time.Timer]struct{}{}}
}

// enqueue queues a first attempt of dl for webhook wid.
func (d *deliverer) enqueue(wid string, dl *deliveryRec, round int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.queues[wid] = append(d.queues[wid], queued{dl, round})
	if !d.running[wid] {
		d.running[wid] = true
		d.wg.Add(1)
		go d.run(wid)
	}
}

// run makes the queued first attempts of webhook wid, in order.
func (d *deliverer) run(wid string) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		q := d.queues[wid]
		if len(q) == 0 || d.closed {
			delete(d.queues, wid)
			delete(d.running, wid)
			d.mu.Unlock()
			return
		}
		next := q[0]
		d.queues[wid] = q[1:]
		d.mu.Unlock()
		d.attempt(wid, next.dl, next.round)
	}
}

// later schedules an attempt after delay.
func (d *deliverer) later(delay time.Duration, wid string, dl *deliveryRec, round int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.wg.Add(1)
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		defer d.wg.Done()
		d.mu.Lock()
		_, live := d.timers[t]
		delete(d.timers, t)
		d.mu.Unlock()
		if live {
			d.attempt(wid, dl, round)
		}
	})
	d.timers[t] = struct{}{}
}

// drop forgets queued attempts and pending retries (Reset).
func (d *deliverer) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for t := range d.timers {
		if t.Stop() {
			d.wg.Done()
		}
	}
	clear(d.timers)
	clear(d.queues)
}

// close stops every goroutine and waits for them.
func (d *deliverer) close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	d.mu.Unlock()
	d.drop()
	d.cancel()
	d.wg.Wait()
}

// backoff is the wait before retry n (1-based): RetryBase doubling, at
// most RetryMax.
func (e *Emulator) backoff(n int) time.Duration {
	d := e.opts.RetryBase
	for i := 1; i < n && d < e.opts.RetryMax; i++ {
		d *= 2
	}
	return min(d, e.opts.RetryMax)
}

// attempt posts dl to its webhook once and records the outcome; a non-2xx
// answer or a transport error schedules the next attempt until
// MaxAttempts.
func (d *deliverer) attempt(wid string, dl *deliveryRec, round int) {
	e := d.e
	e.mu.Lock()
	wh := e.state.webhooks[wid]
	if dl.st != e.state || dl.round != round || dl.d.Status != DeliveryPending {
		e.mu.Unlock()
		return
	}
	if wh == nil || wh.wh.Status != workspace.WebhookEnabled {
		dl.d.Status, dl.d.NextAttemptAt, dl.d.UpdatedAt = DeliveryFailed, nil, e.now()
		dl.d.LastError = "webhook deleted or disabled"
		e.mu.Unlock()
		return
	}
	at := e.opts.Now()
	secrets, url, body := wh.secretsAt(at), wh.wh.URL, dl.body
	dl.d.Attempts++
	dl.tries++
	tries := dl.tries
	e.mu.Unlock()

	status, err := d.post(url, dl.d.EventID, at, body, secrets)

	e.mu.Lock()
	defer e.mu.Unlock()
	if dl.st != e.state {
		return
	}
	dl.d.UpdatedAt = e.now()
	dl.d.ResponseStatus = status
	dl.d.NextAttemptAt = nil
	switch {
	case err == nil && status >= 200 && status < 300:
		dl.d.Status, dl.d.LastError = DeliveryDelivered, ""
		return
	case err != nil:
		dl.d.LastError = err.Error()
	default:
		dl.d.LastError = fmt.Sprintf("receiver answered %d", status)
	}
	log := e.opts.Log.WithField(logfield.Webhook, wid).WithField(logfield.Event, dl.d.EventID).WithField(logfield.Attempt, tries)
	if dl.round != round || d.ctx.Err() != nil {
		return
	}
	if tries >= e.opts.MaxAttempts {
		dl.d.Status = DeliveryFailed
		log.WithField(logfield.Error, dl.d.LastError).Info("emulator webhook delivery failed for good")
		return
	}
	wait := e.backoff(tries)
	next := e.now().Add(wait)
	dl.d.NextAttemptAt = &next
	log.WithField(logfield.Error, dl.d.LastError).WithField(logfield.RetryIn, wait).Debug("emulator webhook delivery failed, will retry")
	d.later(wait, wid, dl, round)
}

// post sends one signed delivery and returns the receiver's status.
func (d *deliverer) post(url, msgID string, at time.Time, body []byte, secrets []string) (int, error) {
	e := d.e
	h, err := signature.SignHeaders(secrets[0], msgID, at, body, secrets[1:]...)
	if err != nil {
		return 0, err
	}
	if e.opts.LegacySignature {
		v, err := signature.SignLegacy(secrets[0], at, body)
		if err != nil {
			return 0, err
		}
		h.Set(signature.HeaderLegacy, v)
	}
	ctx, cancel := context.WithTimeout(d.ctx, e.opts.DeliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "syncd-emulator")
	resp, err := e.opts.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}
