package emulator

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

// ResourceIDPattern is the pattern of a webhook's phone number ids.
const ResourceIDPattern = `^PN(.*)$`

// Events lists every event name a webhook may subscribe to, as the spec's
// Events table does.
var Events = []string{
	"message.received", "message.delivered", "message.failed", "message.undelivered",
	"call.ringing", "call.answered", "call.completed", "call.missed", "call.forwarded", "call.menu.selected",
	"call.recording.completed", "call.transcript.completed", "call.summary.completed", "call.voicemail.completed",
	workspace.EventContactUpdated, workspace.EventContactDeleted,
	"integration.created", "integration.updated", "integration.deleted",
	"task.assigned", "task.created", "task.completed", "task.updated", "task.deleted", "task.unassigned",
	"task.reopened", "task.duedate.removed", "task.duedate.updated", "task.overdue", "task.linked", "task.unlinked",
}

var (
	eventsSchema      = array(enum(Events...), 1, 0)
	resourceIDsSchema = func() *node {
		n := array(str(0, 0).withPattern(ResourceIDPattern), 0, 0).orNull()
		n.starClears = true
		return n
	}()
	webhookURLSchema = str(1, 0).withFormat("uri")
	statusSchema     = enum(workspace.WebhookEnabled, workspace.WebhookDisabled)

	webhookCreateSchema = object(map[string]*node{
		"url":         webhookURLSchema,
		"events":      eventsSchema,
		"resourceIds": resourceIDsSchema,
		"status":      statusSchema,
		"label":       str(0, 0),
	}, "url", "events")

	webhookPatchSchema = object(map[string]*node{
		"url":         webhookURLSchema,
		"events":      eventsSchema,
		"resourceIds": resourceIDsSchema,
		"status":      statusSchema,
		"label":       str(0, 0),
	})
)

// webhookRec is a stored subscription.
type webhookRec struct {
	wh           workspace.Webhook // without Key
	secret       string
	prevSecret   string    // the secret before the last rotation
	prevUntil    time.Time // prevSecret signs until then
	deliveries   []*deliveryRec
	deliveryByID map[string]*deliveryRec
}

func (w *webhookRec) public() workspace.Webhook {
	wh := w.wh
	wh.Events = append([]string{}, wh.Events...)
	if wh.ResourceIDs != nil {
		wh.ResourceIDs = append([]string{}, wh.ResourceIDs...)
	}
	return wh
}

// subscribes reports whether the enabled webhook receives event.
func (w *webhookRec) subscribes(event string) bool {
	if w.wh.Status != workspace.WebhookEnabled {
		return false
	}
	for _, ev := range w.wh.Events {
		if ev == event {
			return true
		}
	}
	return false
}

// normalizeResourceIDs returns nil for the three ways of clearing the
// filter (null, [] and ["*"]).
func normalizeResourceIDs(ids []string) []string {
	if len(ids) == 0 || (len(ids) == 1 && ids[0] == "*") {
		return nil
	}
	return ids
}

// checkWebhook applies the rule beyond the schema: no phone number filter
// on a webhook of contact events, which are workspace-wide (the emulator
// refuses the combination rather than silently ignore the filter).
func checkWebhook(events, resourceIDs []string) []workspace.FieldError {
	if len(normalizeResourceIDs(resourceIDs)) == 0 {
		return nil
	}
	for _, ev := range events {
		if ev == workspace.EventContactUpdated || ev == workspace.EventContactDeleted {
			return []workspace.FieldError{{Path: "/resourceIds", Message: "Expected no resourceIds on a webhook of contact events: contact events are workspace-wide",
				Value: resourceIDs, Schema: map[string]any{"type": "array", "maxItems": 0}}}
		}
	}
	return nil
}

// webhookOf returns the webhook of the request's {id}, or a 404.
func (e *Emulator) webhookOf(r *http.Request) (*webhookRec, *apiError) {
	id := r.PathValue("id")
	wh := e.state.webhooks[id]
	if wh == nil {
		return nil, e.notFound(areaWebhooks, id)
	}
	return wh, nil
}

// createWebhook serves POST /webhooks: {data: Webhook} with the signing
// secret in key. A 51st webhook is refused with 400 (the spec lists no 409
// for webhook operations).
func (e *Emulator) createWebhook(r *http.Request) answer {
	var in struct {
		URL         string   `json:"url"`
		Events      []string `json:"events"`
		ResourceIDs []string `json:"resourceIds"`
		Status      *string  `json:"status"`
		Label       string   `json:"label"`
	}
	errs, aerr := e.readBody(r, areaWebhooks, webhookCreateSchema, &in)
	if aerr != nil {
		return fail(aerr)
	}
	if errs = merge(errs, checkWebhook(in.Events, in.ResourceIDs)); len(errs) > 0 {
		return fail(e.validationError(areaWebhooks, errs))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	if len(s.webhooks) >= workspace.MaxWebhooks {
		return fail(e.newError(areaWebhooks, http.StatusBadRequest,
			fmt.Sprintf("A workspace can have at most %d webhooks", workspace.MaxWebhooks)))
	}
	secret, err := signature.NewSecret(s.ids)
	if err != nil {
		return fail(e.unknownError(areaWebhooks))
	}
	now := e.now()
	status := workspace.WebhookEnabled
	if in.Status != nil {
		status = *in.Status
	}
	id := strconv.Itoa(s.nextWebhookID)
	s.nextWebhookID++
	rec := &webhookRec{
		wh: workspace.Webhook{
			ID: id, OrgID: e.orgID(), Label: in.Label, Status: status, URL: in.URL,
			Events: dedupe(in.Events), ResourceIDs: normalizeResourceIDs(in.ResourceIDs),
			APIVersion: e.opts.Version, CreatedAt: now, UpdatedAt: now,
		},
		secret:       secret,
		deliveryByID: map[string]*deliveryRec{},
	}
	s.webhooks[id] = rec
	s.webhookOrder = append(s.webhookOrder, id)
	out := rec.public()
	out.Key = secret
	return ok(http.StatusCreated, dataOf(out))
}

func dedupe(vals []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// listWebhooks serves GET /webhooks, in creation order.
func (e *Emulator) listWebhooks(*http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]workspace.Webhook, 0, len(e.state.webhookOrder))
	for _, id := range e.state.webhookOrder {
		out = append(out, e.state.webhooks[id].public())
	}
	return ok(http.StatusOK, dataOf(out))
}

// getWebhook serves GET /webhooks/{id}.
func (e *Emulator) getWebhook(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, err := e.webhookOf(r)
	if err != nil {
		return fail(err)
	}
	return ok(http.StatusOK, dataOf(wh.public()))
}

// patchWebhook serves PATCH /webhooks/{id}: only the fields supplied
// change; resourceIds null, [] or ["*"] clears the filter.
func (e *Emulator) patchWebhook(r *http.Request) answer {
	var p workspace.WebhookPatch
	errs, aerr := e.readBody(r, areaWebhooks, webhookPatchSchema, &p)
	if aerr != nil {
		return fail(aerr)
	}
	if len(errs) > 0 {
		return fail(e.validationError(areaWebhooks, errs))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, aerr := e.webhookOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	next := wh.wh
	next.Events = append([]string{}, next.Events...)
	if v, ok := p.URL.Get(); ok {
		next.URL = v
	}
	if p.Events != nil {
		next.Events = dedupe(p.Events)
	}
	if p.ResourceIDs.IsSet() {
		ids, _ := p.ResourceIDs.Get()
		next.ResourceIDs = normalizeResourceIDs(ids)
	}
	if v, ok := p.Status.Get(); ok {
		next.Status = v
	}
	if v, ok := p.Label.Get(); ok {
		next.Label = v
	}
	if errs := checkWebhook(next.Events, next.ResourceIDs); len(errs) > 0 {
		return fail(e.validationError(areaWebhooks, errs))
	}
	next.UpdatedAt = bumpUpdatedAt(wh.wh.UpdatedAt, e.now())
	wh.wh = next
	return ok(http.StatusOK, dataOf(wh.public()))
}

// deleteWebhook serves DELETE /webhooks/{id}: 204; its pending deliveries
// are dropped.
func (e *Emulator) deleteWebhook(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, err := e.webhookOf(r)
	if err != nil {
		return fail(err)
	}
	s := e.state
	delete(s.webhooks, wh.wh.ID)
	for i, id := range s.webhookOrder {
		if id == wh.wh.ID {
			s.webhookOrder = append(s.webhookOrder[:i:i], s.webhookOrder[i+1:]...)
			break
		}
	}
	return ok(http.StatusNoContent, nil)
}

// rotateWebhook serves POST /webhooks/{id}/rotate: {data: {key}}. The
// previous secret keeps signing, next to the new one, for RotationGrace.
func (e *Emulator) rotateWebhook(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, aerr := e.webhookOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	secret, err := signature.NewSecret(e.state.ids)
	if err != nil {
		return fail(e.unknownError(areaWebhooks))
	}
	now := e.now()
	wh.prevSecret, wh.prevUntil = wh.secret, now.Add(e.opts.RotationGrace)
	wh.secret = secret
	wh.wh.UpdatedAt = bumpUpdatedAt(wh.wh.UpdatedAt, now)
	return ok(http.StatusOK, dataOf(workspace.SigningSecret{Key: secret}))
}

// secretsAt returns the secrets that sign a delivery at t: the current
// one, then the previous one during its grace period.
func (w *webhookRec) secretsAt(t time.Time) []string {
	if w.prevSecret != "" && t.Before(w.prevUntil) {
		return []string{w.secret, w.prevSecret}
	}
	return []string{w.secret}
}

// history returns the delivery history, oldest first.
func (w *webhookRec) history() []workspace.Delivery {
	out := make([]workspace.Delivery, 0, len(w.deliveries))
	for _, d := range w.deliveries {
		out = append(out, d.public())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}
