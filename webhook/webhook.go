// Package webhook is syncd's receiver of the workspace's webhook
// deliveries: an http.Handler that verifies each delivery's signature
// against the signing secrets kept in state, checks the envelope, and
// writes the event durably to the state's inbox before it answers 2xx.
//
// An accepted event is never lost: Inbox.Enqueue commits (with fsync)
// before the answer, so a process killed the next instant finds it in the
// inbox at start-up. A refused delivery changes nothing and gets a short
// reason: 413 when the body is over the limit, 401 when the signature is
// missing, wrong or too old (more than the tolerance, 5 minutes by
// default, from the clock), 400 when the headers or the JSON envelope are
// malformed. The envelope is the one the service's webhook guide shows,
// {id, object: "event", apiVersion, createdAt, type, data: {object:
// <the contact>}}; data.resource is read too (the shape of earlier
// emulators and of older inbox entries). A contact event whose contact is
// in neither place is refused with a log entry naming what data held
// instead, and every refusal is counted by reason (Stats.RefusedBy), so
// that a change of the envelope shows on its first delivery.
//
// A delivery seen before (same webhook-id) is acknowledged again without
// a second inbox entry; an event of a type syncd does not handle is
// acknowledged and dropped. When the inbox cannot be written the answer
// is 503, so that the service delivers again later.
//
// Secrets and signatures never appear in logs or answers.
package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

// DefaultMaxBodyBytes bounds a delivery's body when Options.MaxBodyBytes
// is zero.
const DefaultMaxBodyBytes = 1 << 20

// Store is the part of the state the receiver uses: the signing secrets
// and the inbox. StoreOf takes it from an open state file.
type Store struct {
	Webhooks interface {
		Secrets() (current state.WebhookSecret, previous []state.WebhookSecret, err error)
	}
	Inbox interface {
		Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	}
}

// StoreOf is the receiver's view of st.
func StoreOf(st *state.Store) Store { return Store{Webhooks: st.Webhooks, Inbox: st.Inbox} }

// ActivityQueue is the queue of call and message events;
// *state.Activities implements it.
type ActivityQueue interface {
	Enqueue(e state.ActivityEvent) (seq uint64, duplicate bool, err error)
}

var _ ActivityQueue = (*state.Activities)(nil)

// Options configure a Receiver.
type Options struct {
	// Store holds the signing secrets and the inbox.
	Store Store
	// Legacy also accepts the older single-header signature scheme.
	Legacy bool
	// Tolerance is how far a delivery's timestamp may be from the clock
	// (signature.DefaultTolerance when zero).
	Tolerance time.Duration
	// MaxBodyBytes bounds a body (DefaultMaxBodyBytes when zero).
	MaxBodyBytes int64
	// Types are the event types written to the inbox; others are
	// acknowledged and dropped. Default: contact.updated and
	// contact.deleted.
	Types []string
	// Accepted, when set, is called after each event written to the
	// inbox (to wake the applier). It must not block.
	Accepted func()
	// Activities, when set, takes the events of ActivityTypes (calls and
	// messages, for the activity direction) instead of the inbox,
	// durably before the 2xx, and ActivityAccepted is called after each.
	Activities       ActivityQueue
	ActivityTypes    []string
	ActivityAccepted func()
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log receives one entry per refusal; default: the standard logger.
	Log *logrus.Entry
}

// Stats counts the receiver's answers.
type Stats struct {
	Accepted   int64 // written to the inbox
	Duplicates int64 // seen before: acknowledged, not written again
	Ignored    int64 // types syncd does not handle: acknowledged, dropped
	Refused    int64 // 400, 401, 405, 413
	Failed     int64 // 5xx: the inbox or the secrets could not be read
	// RefusedBy counts the refusals by reason (the Reason constants; every
	// one is present, zero or not). Its values add up to Refused.
	RefusedBy map[string]int64
}

// Reasons of a refusal, the labels of the refusal counter: a short, fixed
// set, so that a metric by reason stays small.
const (
	ReasonMethod           = "method"             // not a POST (405)
	ReasonTooLarge         = "too_large"          // body over the limit (413)
	ReasonUnreadable       = "unreadable"         // body could not be read (400)
	ReasonNoSignature      = "no_signature"       // no signature header (401)
	ReasonBadSignature     = "bad_signature"      // no signature matches a secret (401)
	ReasonStale            = "stale_timestamp"    // timestamp too far from the clock (401)
	ReasonMalformedHeaders = "malformed_headers"  // signature headers malformed (400)
	ReasonMalformed        = "malformed_envelope" // not JSON, or no id or type (400)
	ReasonNoContact        = "no_contact"         // contact event without data.object or data.resource (400)
	ReasonBadContact       = "bad_contact"        // the contact found lacks its id or updatedAt, or does not decode (400)
	reasonCount            = 10
)

// reasons lists the Reason constants in the order of Receiver.refusedBy.
var reasons = [reasonCount]string{ReasonMethod, ReasonTooLarge, ReasonUnreadable, ReasonNoSignature, ReasonBadSignature,
	ReasonStale, ReasonMalformedHeaders, ReasonMalformed, ReasonNoContact, ReasonBadContact}

// Reasons returns every reason a refusal is counted under.
func Reasons() []string { return append([]string(nil), reasons[:]...) }

// Receiver is the webhook endpoint. It is safe for concurrent use.
type Receiver struct {
	opts          Options
	types         map[string]bool
	activityTypes map[string]bool
	log           *logrus.Entry

	accepted, duplicates, ignored, refused, failed atomic.Int64
	refusedBy                                      [reasonCount]atomic.Int64
}

// New checks opts and returns a Receiver.
func New(opts Options) (*Receiver, error) {
	if opts.Store.Webhooks == nil || opts.Store.Inbox == nil {
		return nil, errors.New("webhook receiver: store is required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Tolerance <= 0 {
		opts.Tolerance = signature.DefaultTolerance
	}
	if len(opts.Types) == 0 {
		opts.Types = []string{workspace.EventContactUpdated, workspace.EventContactDeleted}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = logrus.NewEntry(logrus.StandardLogger())
	}
	r := &Receiver{opts: opts, types: map[string]bool{}, log: log.WithField(logfield.Component, "webhook")}
	for _, t := range opts.Types {
		r.types[t] = true
	}
	r.activityTypes = map[string]bool{}
	if opts.Activities != nil {
		for _, t := range opts.ActivityTypes {
			r.activityTypes[t] = true
		}
	}
	return r, nil
}

// Stats returns the counters.
func (r *Receiver) Stats() Stats {
	s := Stats{
		Accepted: r.accepted.Load(), Duplicates: r.duplicates.Load(), Ignored: r.ignored.Load(),
		Refused: r.refused.Load(), Failed: r.failed.Load(), RefusedBy: make(map[string]int64, reasonCount),
	}
	for i, reason := range reasons {
		s.RefusedBy[reason] = r.refusedBy[i].Load()
	}
	return s
}

// answer is the JSON body of every answer.
type answer struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ServeHTTP handles one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		r.refuse(w, req, http.StatusMethodNotAllowed, refused(ReasonMethod, "only POST is accepted"))
		return
	}
	if req.ContentLength > r.opts.MaxBodyBytes {
		r.refuse(w, req, http.StatusRequestEntityTooLarge, refused(ReasonTooLarge, fmt.Sprintf("body over %d bytes", r.opts.MaxBodyBytes)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			r.refuse(w, req, http.StatusRequestEntityTooLarge, refused(ReasonTooLarge, fmt.Sprintf("body over %d bytes", r.opts.MaxBodyBytes)))
			return
		}
		r.refuse(w, req, http.StatusBadRequest, refused(ReasonUnreadable, "body could not be read"))
		return
	}

	if status, why := r.verify(req.Header, body); status != 0 {
		if status >= 500 {
			r.fail(w, req, status, why.reason)
			return
		}
		r.refuse(w, req, status, why)
		return
	}

	ev, err := parse(body)
	if err != nil {
		var why *refusal
		if !errors.As(err, &why) {
			why = refused(ReasonMalformed, err.Error())
		}
		r.refuse(w, req, http.StatusBadRequest, why)
		return
	}
	id := strings.TrimSpace(req.Header.Get(signature.HeaderID))
	if id == "" {
		id = ev.ID // the legacy scheme has no webhook-id header
	}
	if r.activityTypes[ev.Type] {
		r.enqueueActivity(w, req, id, ev.Type, body)
		return
	}
	if !r.types[ev.Type] {
		r.ignored.Add(1)
		r.log.WithField(logfield.Type, ev.Type).WithField(logfield.WebhookID, id).Debug("webhook event of an unhandled type dropped")
		writeAnswer(w, http.StatusOK, answer{Status: "ignored", Reason: "event type not handled"})
		return
	}
	_, dup, err := r.opts.Store.Inbox.Enqueue(state.InboxEvent{
		ID: id, Type: ev.Type, ContactID: ev.ContactID, ContactUpdatedAt: ev.UpdatedAt,
		Body: body, ReceivedAt: r.opts.Now(),
	})
	if err != nil {
		r.log.WithError(err).WithField(logfield.WebhookID, id).Error("webhook event could not be written to the inbox")
		r.fail(w, req, http.StatusServiceUnavailable, "event could not be stored; deliver again later")
		return
	}
	if dup {
		r.duplicates.Add(1)
		writeRaw(w, http.StatusOK, answerDuplicate)
		return
	}
	r.accepted.Add(1)
	if r.opts.Accepted != nil {
		r.opts.Accepted()
	}
	writeRaw(w, http.StatusOK, answerAccepted)
}

// enqueueActivity writes a call or message event to the activity queue
// before it answers, as ServeHTTP does contact events to the inbox. The
// body (which may hold a text or a transcript) is never logged.
func (r *Receiver) enqueueActivity(w http.ResponseWriter, req *http.Request, id, typ string, body []byte) {
	_, dup, err := r.opts.Activities.Enqueue(state.ActivityEvent{ID: id, Type: typ, Body: body, ReceivedAt: r.opts.Now()})
	if err != nil {
		r.log.WithError(err).WithField(logfield.WebhookID, id).Error("activity event could not be written to the queue")
		r.fail(w, req, http.StatusServiceUnavailable, "event could not be stored; deliver again later")
		return
	}
	if dup {
		r.duplicates.Add(1)
		writeRaw(w, http.StatusOK, answerDuplicate)
		return
	}
	r.accepted.Add(1)
	if r.opts.ActivityAccepted != nil {
		r.opts.ActivityAccepted()
	}
	writeRaw(w, http.StatusOK, answerAccepted)
}

// verify checks the signature against the secrets in state. It returns
// 0 when the delivery is authentic, else the status and reason to answer
// (its label is empty on a 5xx: syncd's failure, not a refusal).
func (r *Receiver) verify(h http.Header, body []byte) (int, *refusal) {
	cur, prev, err := r.opts.Store.Webhooks.Secrets()
	if errors.Is(err, state.ErrNotFound) {
		return http.StatusServiceUnavailable, refused("", "no signing secret configured; run syncd webhooks register")
	}
	if err != nil {
		r.log.WithError(err).Error("webhook secrets could not be read")
		return http.StatusServiceUnavailable, refused("", "signing secrets could not be read")
	}
	secrets := make([]string, 0, 1+len(prev))
	secrets = append(secrets, cur.Secret)
	for _, p := range prev {
		secrets = append(secrets, p.Secret)
	}
	v := signature.Verifier{Secrets: secrets, Tolerance: r.opts.Tolerance, Now: r.opts.Now, Legacy: r.opts.Legacy}
	switch err := v.Verify(h, body); {
	case err == nil:
		return 0, nil
	case errors.Is(err, signature.ErrNoSignature):
		return http.StatusUnauthorized, refused(ReasonNoSignature, "no signature")
	case errors.Is(err, signature.ErrBadSignature):
		return http.StatusUnauthorized, refused(ReasonBadSignature, "signature does not match")
	case errors.Is(err, signature.ErrStaleTimestamp):
		return http.StatusUnauthorized, refused(ReasonStale, "timestamp too far from the clock")
	case errors.Is(err, signature.ErrMalformed):
		return http.StatusBadRequest, refused(ReasonMalformedHeaders, "malformed signature headers")
	default: // ErrBadSecret: our own configuration
		r.log.WithError(err).Error("a stored webhook secret is unusable")
		return http.StatusInternalServerError, refused("", "signing secret unusable")
	}
}

// refuse answers a 4xx, counting it under its label and logging the
// reason and what was missing (never the headers).
func (r *Receiver) refuse(w http.ResponseWriter, req *http.Request, status int, why *refusal) {
	r.refused.Add(1)
	for i, reason := range reasons {
		if reason == why.label {
			r.refusedBy[i].Add(1)
		}
	}
	fields := logrus.Fields{logfield.Status: status, logfield.Reason: why.reason, logfield.Refusal: why.label, logfield.Remote: req.RemoteAddr}
	if why.missing != "" {
		fields["missing"] = why.missing
	}
	r.log.WithFields(fields).Warn("webhook delivery refused")
	writeAnswer(w, status, answer{Status: "refused", Reason: why.reason})
}

// fail answers a 5xx: the delivery is fine, syncd is not.
func (r *Receiver) fail(w http.ResponseWriter, req *http.Request, status int, reason string) {
	r.failed.Add(1)
	r.log.WithFields(logrus.Fields{logfield.Status: status, logfield.Reason: reason, logfield.Remote: req.RemoteAddr}).Warn("webhook delivery not accepted")
	writeAnswer(w, status, answer{Status: "error", Reason: reason})
}

func writeAnswer(w http.ResponseWriter, status int, a answer) {
	body, err := json.Marshal(a)
	if err != nil {
		body = []byte(`{"status":"error"}`)
	}
	writeRaw(w, status, append(body, '\n'))
}

// The answers of accepted and duplicate deliveries, encoded once: they
// are most of what the receiver sends.
var (
	answerAccepted  = []byte(`{"status":"accepted"}` + "\n")
	answerDuplicate = []byte(`{"status":"duplicate"}` + "\n")
	headerJSON      = []string{"application/json"}
)

// writeRaw answers status with the JSON body, which ends with a newline.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = headerJSON
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
