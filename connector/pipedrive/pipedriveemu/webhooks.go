package pipedriveemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Webhooks, as Pipedrive documents them (see ../FACTS.md):
//
//   - GET /v1/webhooks lists the company's webhooks, POST /v1/webhooks
//     creates one (subscription_url, event_action, event_object, and the
//     optional http_auth_user, http_auth_password, version "1.0" or
//     "2.0"), DELETE /v1/webhooks/{id} deletes one. The password is never
//     listed back. At most 40 webhooks per user.
//   - When a person is created, changed or deleted, every matching
//     webhook gets an HTTP POST with a JSON body (v2: data, previous,
//     meta with action create/change/delete, entity person, entity_id,
//     attempt; v1: current, previous, meta with action
//     added/updated/deleted, object person, and retry), with
//     Authorization: Basic when http_auth_user is set.
//   - An answer other than 2xx (or none in 10 s) is retried 3 times, 3,
//     30 and 150 seconds later (Options.WebhookRetryScale shortens them
//     for tests).

// The webhook routes.
const (
	RouteListWebhooks  Route = "GET /v1/webhooks"
	RouteAddWebhook    Route = "POST /v1/webhooks"
	RouteDeleteWebhook Route = "DELETE /v1/webhooks/{id}"
	maxWebhooksPerUser       = 40
	webhookTimeout           = 10 * time.Second
)

// webhookRetries are the waits before the retries of a delivery.
var webhookRetries = []time.Duration{3 * time.Second, 30 * time.Second, 150 * time.Second}

// Webhook is a webhook as the server stores it.
type Webhook struct {
	ID              int64
	SubscriptionURL string
	EventAction     string
	EventObject     string
	HTTPAuthUser    string
	HTTPAuthPass    string
	Version         string
	AddTime         time.Time
}

// Delivery is one attempt to deliver a webhook, as the server saw it.
type Delivery struct {
	WebhookID int64
	Action    string
	EntityID  string
	Attempt   int
	Status    int // 0 when no answer came
}

// webhooks is the server's webhook state; its own lock, so that
// deliveries never hold the server's.
type webhooks struct {
	mu         sync.Mutex
	list       []*Webhook
	nextID     int64
	deliveries []Delivery
	wg         sync.WaitGroup
	ctx        context.Context
	stop       context.CancelFunc
	client     *http.Client
}

// Webhooks returns the registered webhooks.
func (s *Server) Webhooks() []Webhook {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	out := make([]Webhook, len(s.hooks.list))
	for i, w := range s.hooks.list {
		out[i] = *w
	}
	return out
}

// Deliveries returns every delivery attempt so far, in order.
func (s *Server) Deliveries() []Delivery {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	return append([]Delivery(nil), s.hooks.deliveries...)
}

// webhookJSON is a webhook as the API answers it.
func (w *Webhook) json() map[string]any {
	var user any
	if w.HTTPAuthUser != "" {
		user = w.HTTPAuthUser
	}
	return map[string]any{
		"id": w.ID, "company_id": companyID, "owner_id": ownerID, "user_id": ownerID,
		"event_action": w.EventAction, "event_object": w.EventObject, "subscription_url": w.SubscriptionURL,
		"is_active": 1, "add_time": w.AddTime.UTC().Format(time.DateTime), "remove_time": nil, "type": "general",
		"http_auth_user": user, "http_auth_password": nil, "version": w.Version,
	}
}

// companyID and ownerID are the company's and the token user's ids.
const (
	companyID = 1001
	ownerID   = 2001
)

func (s *Server) listWebhooksLocked() answer {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	data := []map[string]any{}
	for _, w := range s.hooks.list {
		data = append(data, w.json())
	}
	return ok(map[string]any{"status": "ok", "success": true, "data": data})
}

var webhookActions = map[string][]string{
	"1.0": {"added", "updated", "merged", "deleted", "*"},
	"2.0": {"create", "change", "delete", "*"},
}

func (s *Server) addWebhookLocked(body []byte) answer {
	var in struct {
		SubscriptionURL string `json:"subscription_url"`
		EventAction     string `json:"event_action"`
		EventObject     string `json:"event_object"`
		UserID          *int64 `json:"user_id"`
		HTTPAuthUser    string `json:"http_auth_user"`
		HTTPAuthPass    string `json:"http_auth_password"`
		Version         string `json:"version"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return badRequest("invalid JSON: %v", err)
	}
	if in.Version == "" {
		in.Version = "1.0"
	}
	acts, known := webhookActions[in.Version]
	switch u, err := url.Parse(in.SubscriptionURL); {
	case in.SubscriptionURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return badRequest("subscription_url must be a full, valid URL")
	case !known:
		return badRequest("version must be 1.0 or 2.0")
	case !contains(acts, in.EventAction):
		return badRequest("event_action must be one of %s", strings.Join(acts, ", "))
	case in.EventObject == "":
		return badRequest("event_object is required")
	}
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	if len(s.hooks.list) >= maxWebhooksPerUser {
		return badRequest("the limit of %d webhooks per user is reached", maxWebhooksPerUser)
	}
	s.hooks.nextID++
	w := &Webhook{ID: s.hooks.nextID, SubscriptionURL: in.SubscriptionURL, EventAction: in.EventAction, EventObject: in.EventObject,
		HTTPAuthUser: in.HTTPAuthUser, HTTPAuthPass: in.HTTPAuthPass, Version: in.Version, AddTime: s.nowLocked()}
	s.hooks.list = append(s.hooks.list, w)
	return answer{Status: http.StatusCreated, Body: map[string]any{"status": "ok", "success": true, "data": w.json()}}
}

func (s *Server) deleteWebhookLocked(id string) answer {
	n, _ := strconv.ParseInt(id, 10, 64)
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	for i, w := range s.hooks.list {
		if w.ID == n {
			s.hooks.list = append(s.hooks.list[:i], s.hooks.list[i+1:]...)
			return ok(map[string]any{"status": "ok", "success": true})
		}
	}
	return fail(http.StatusNotFound, "Webhook not found")
}

// v1Actions names the v2 actions as v1 does.
var v1Actions = map[string]string{"create": "added", "change": "updated", "delete": "deleted"}

// notifyLocked delivers the event of person p (action create, change or
// delete) to every matching webhook, in the background.
func (s *Server) notifyLocked(p *Person, action string) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	if len(s.hooks.list) == 0 || s.hooks.ctx.Err() != nil {
		return
	}
	data, _ := json.Marshal(s.jsonOfLocked(p, nil)) // now: the person may change before the delivery
	now := s.nowLocked()
	for _, w := range s.hooks.list {
		if w.EventObject != "person" && w.EventObject != "*" {
			continue
		}
		act := action
		if w.Version == "1.0" {
			act = v1Actions[action]
		}
		if w.EventAction != act && w.EventAction != "*" {
			continue
		}
		s.hooks.wg.Add(1)
		go s.deliver(*w, act, p.ID, data, now)
	}
}

// deliver POSTs one event, retrying as documented.
func (s *Server) deliver(w Webhook, action, entityID string, data json.RawMessage, at time.Time) {
	defer s.hooks.wg.Done()
	for attempt := 1; ; attempt++ {
		body := webhookBody(w, action, entityID, data, at, attempt)
		status := s.post(w, body)
		s.hooks.mu.Lock()
		s.hooks.deliveries = append(s.hooks.deliveries, Delivery{WebhookID: w.ID, Action: action, EntityID: entityID, Attempt: attempt, Status: status})
		s.hooks.mu.Unlock()
		if status >= 200 && status < 300 || attempt > len(webhookRetries) {
			return
		}
		wait := time.Duration(float64(webhookRetries[attempt-1]) * s.opts.WebhookRetryScale)
		if s.opts.WebhookRetryScale == 0 {
			wait = webhookRetries[attempt-1]
		}
		select {
		case <-s.hooks.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func webhookBody(w Webhook, action, entityID string, data json.RawMessage, at time.Time, attempt int) []byte {
	var v any
	if w.Version == "2.0" {
		v = map[string]any{
			"data": data, "previous": nil,
			"meta": map[string]any{
				"action": action, "entity": "person", "entity_id": entityID, "version": "2.0",
				"company_id": strconv.Itoa(companyID), "user_id": strconv.Itoa(ownerID), "webhook_id": strconv.FormatInt(w.ID, 10),
				"webhook_owner_id": strconv.Itoa(ownerID), "id": fmt.Sprintf("%d-%s-%d", w.ID, entityID, at.UnixNano()),
				"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"), "type": "general", "change_source": "api",
				"is_bulk_edit": false, "attempt": attempt, "host": "company.pipedrive.com",
			},
		}
	} else {
		v = map[string]any{
			"v": 1, "current": data, "previous": nil, "retry": attempt - 1,
			"meta": map[string]any{
				"v": 1, "action": action, "object": "person", "id": entityID, "company_id": companyID, "user_id": ownerID,
				"webhook_id": strconv.FormatInt(w.ID, 10), "timestamp": at.Unix(), "type": "general", "host": "company.pipedrive.com",
			},
		}
	}
	b, _ := json.Marshal(v)
	return b
}

// post sends one attempt and returns its status, 0 when none came.
func (s *Server) post(w Webhook, body []byte) int {
	ctx, cancel := context.WithTimeout(s.hooks.ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.SubscriptionURL, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Pipedrive Webhooks")
	if w.HTTPAuthUser != "" {
		req.SetBasicAuth(w.HTTPAuthUser, w.HTTPAuthPass)
	}
	resp, err := s.hooks.client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
