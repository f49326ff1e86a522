package hubspotemu

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Webhooks, as HubSpot documents them for an app's webhook subscriptions
// (see ../FACTS.md): once SetWebhooks names a target URL, every contact
// creation, property change, deletion (archive), restore and merge is
// sent there as an event in a JSON array of at most 100 events per
// request (objectId, propertyName and propertyValue for a property
// change, eventId, subscriptionId, portalId, appId, occurredAt in
// milliseconds, subscriptionType, attemptNumber from 0, changeSource),
// signed with the app's client secret: X-HubSpot-Signature-v3 (base64 of
// HMAC-SHA256 over method + URI + body + X-HubSpot-Request-Timestamp,
// milliseconds) beside X-HubSpot-Signature-Version v1 and
// X-HubSpot-Signature (hex SHA-256 of client secret + body). A request
// that fails to connect, is not answered within 5 s, or is answered
// other than 2xx and 400, 401, 403, 404, 405 is sent again, up to 10
// times, 2 minutes later and then twice as long each time
// (WebhookTarget.RetryScale shortens the waits in tests).

// WebhookTarget is an app's webhook settings.
type WebhookTarget struct {
	// URL is the target URL; ClientSecret the app's client secret.
	URL          string
	ClientSecret string
	// AppID and PortalID are carried by the events.
	AppID, PortalID int64
	// RetryScale multiplies the waits before retries; 0 means 1.
	RetryScale float64
	// Clock, when set, stamps X-HubSpot-Request-Timestamp (a test makes
	// stale requests with it); nil is the real clock.
	Clock func() time.Time
}

// Event is one webhook event as HubSpot sends it.
type Event struct {
	EventID          int64  `json:"eventId"`
	SubscriptionID   int64  `json:"subscriptionId"`
	PortalID         int64  `json:"portalId"`
	AppID            int64  `json:"appId"`
	OccurredAt       int64  `json:"occurredAt"`
	SubscriptionType string `json:"subscriptionType"`
	AttemptNumber    int    `json:"attemptNumber"`
	ObjectID         int64  `json:"objectId"`
	PropertyName     string `json:"propertyName,omitempty"`
	PropertyValue    string `json:"propertyValue,omitempty"`
	ChangeSource     string `json:"changeSource"`
}

// WebhookRequest is one request the server sent, as it saw it.
type WebhookRequest struct {
	Events  int
	Attempt int
	Status  int // 0 when no answer came
}

// noRetry are the answers HubSpot does not retry: the request was
// refused for good.
var noRetry = map[int]bool{400: true, 401: true, 403: true, 404: true, 405: true}

// The subscriptions' ids, per subscription type.
var subscriptionIDs = map[string]int64{
	"contact.creation": 1, "contact.deletion": 2, "contact.propertyChange": 3, "contact.restore": 4, "contact.merge": 5,
}

const (
	maxEventsPerRequest = 100
	webhookTimeout      = 5 * time.Second
	webhookAttempts     = 10
)

// webhooks is the server's webhook state, with its own lock so that
// sending never holds the server's.
type webhooks struct {
	mu       sync.Mutex
	target   *WebhookTarget
	pending  []Event
	nextID   int64
	requests []WebhookRequest
	wake     chan struct{}
	ctx      context.Context
	stop     context.CancelFunc
	done     chan struct{}
}

// SetWebhooks sets the app's webhook target (nil: none) and starts
// sending.
func (s *Server) SetWebhooks(t *WebhookTarget) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.target = t
	if s.hooks.ctx == nil {
		s.hooks.ctx, s.hooks.stop = context.WithCancel(context.Background())
		s.hooks.wake, s.hooks.done = make(chan struct{}, 1), make(chan struct{})
		go s.sendWebhooks()
	}
}

// WebhookRequests returns every request sent so far, in order.
func (s *Server) WebhookRequests() []WebhookRequest {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return append([]WebhookRequest(nil), s.hooks.requests...)
}

// closeWebhooks stops sending.
func (s *Server) closeWebhooks() {
	s.hooks.mu.Lock()
	stop, done := s.hooks.stop, s.hooks.done
	s.hooks.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// eventsLocked queues the events of c's new version against prev (nil
// when c is new).
func (s *Server) eventsLocked(c *contact, prev *version) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	if s.hooks.target == nil {
		return
	}
	at := s.nowLocked().UnixMilli()
	add := func(typ, name, value string) {
		s.hooks.nextID++
		s.hooks.pending = append(s.hooks.pending, Event{
			EventID: s.hooks.nextID, SubscriptionID: subscriptionIDs[typ], PortalID: s.hooks.target.PortalID, AppID: s.hooks.target.AppID,
			OccurredAt: at, SubscriptionType: typ, ObjectID: c.id, PropertyName: name, PropertyValue: value, ChangeSource: "CRM_UI",
		})
	}
	switch gone := c.archived || c.mergedInto != 0; {
	case prev == nil:
		add("contact.creation", "", "")
	case c.mergedInto != 0 && !prev.archived:
		add("contact.merge", "", "")
	case gone && !prev.archived:
		add("contact.deletion", "", "")
	case !gone && prev.archived:
		add("contact.restore", "", "")
	case !gone:
		for k, v := range c.props {
			if prev.props[k] != v && k != "lastmodifieddate" {
				add("contact.propertyChange", k, v)
			}
		}
		for k := range prev.props {
			if _, still := c.props[k]; !still {
				add("contact.propertyChange", k, "")
			}
		}
	}
	select {
	case s.hooks.wake <- struct{}{}:
	default:
	}
}

// sendWebhooks sends the queued events, up to 100 a request, one
// request at a time.
func (s *Server) sendWebhooks() {
	defer close(s.hooks.done)
	client := &http.Client{Timeout: webhookTimeout}
	for {
		select {
		case <-s.hooks.ctx.Done():
			return
		case <-s.hooks.wake:
		}
		for {
			s.hooks.mu.Lock()
			t := s.hooks.target
			n := min(len(s.hooks.pending), maxEventsPerRequest)
			batch := append([]Event(nil), s.hooks.pending[:n]...)
			s.hooks.pending = s.hooks.pending[n:]
			s.hooks.mu.Unlock()
			if n == 0 || t == nil {
				break
			}
			s.sendBatch(client, *t, batch)
		}
	}
}

// sendBatch sends one request, retrying as documented.
func (s *Server) sendBatch(client *http.Client, t WebhookTarget, batch []Event) {
	for attempt := 0; attempt < webhookAttempts; attempt++ {
		for i := range batch {
			batch[i].AttemptNumber = attempt
		}
		body, _ := json.Marshal(batch)
		status := post(s.hooks.ctx, client, t, body)
		s.hooks.mu.Lock()
		s.hooks.requests = append(s.hooks.requests, WebhookRequest{Events: len(batch), Attempt: attempt, Status: status})
		s.hooks.mu.Unlock()
		if status >= 200 && status < 300 || noRetry[status] {
			return
		}
		scale := t.RetryScale
		if scale == 0 {
			scale = 1
		}
		// The first retry 2 minutes later, then twice as long each time.
		wait := time.Duration(float64(2*time.Minute<<attempt) * scale)
		select {
		case <-s.hooks.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// post sends one signed request and returns its status, 0 when none
// came.
func post(ctx context.Context, client *http.Client, t WebhookTarget, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	now := time.Now
	if t.Clock != nil {
		now = t.Clock
	}
	ts := strconv.FormatInt(now().UnixMilli(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-HubSpot-Request-Timestamp", ts)
	req.Header.Set("X-HubSpot-Signature-v3", SignatureV3(t.ClientSecret, http.MethodPost, t.URL, body, ts))
	req.Header.Set("X-HubSpot-Signature-Version", "v1")
	req.Header.Set("X-HubSpot-Signature", SignatureV1(t.ClientSecret, body))
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// decodedURI is uri with the percent-encoded characters of the
// "Validating requests" page's table decoded, as the v3 signature
// covers it.
var decodedURI = strings.NewReplacer("%3A", ":", "%2F", "/", "%3F", "?", "%40", "@", "%21", "!", "%24", "$",
	"%27", "'", "%28", "(", "%29", ")", "%2A", "*", "%2C", ",", "%3B", ";").Replace

// SignatureV1 is HubSpot's v1 signature (X-HubSpot-Signature with
// X-HubSpot-Signature-Version v1, sent with webhooks API requests): the
// hex SHA-256 of client secret + body.
func SignatureV1(secret string, body []byte) string {
	sum := sha256.Sum256(append([]byte(secret), body...))
	return hex.EncodeToString(sum[:])
}

// SignatureV2 is HubSpot's v2 signature (X-HubSpot-Signature-Version
// v2, sent with workflow and CRM card requests): the hex SHA-256 of
// client secret + method + URI + body, the URI exactly as called.
func SignatureV2(secret, method, uri string, body []byte) string {
	sum := sha256.Sum256(append([]byte(secret+method+uri), body...))
	return hex.EncodeToString(sum[:])
}

// SignatureV3 is HubSpot's v3 signature of a request: base64 of
// HMAC-SHA256 with the client secret over method + URI + body +
// timestamp, the URI with the characters the documentation lists
// decoded.
func SignatureV3(secret, method, uri string, body []byte, timestamp string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method + decodedURI(uri)))
	m.Write(body)
	m.Write([]byte(timestamp))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
