package workspace

import (
	"context"
	"fmt"
)

// Webhook operations live under /webhooks as the spec writes them, or
// under /v1/webhooks as the published OpenAPI document has them: the
// client uses the form the service answers (see client_fallback.go). They
// require the version header, which the client sends on every request.
//
// Only GET, PATCH and DELETE are retried after a 5xx or a transport
// failure. The POSTs are not: a create may add a second subscription, a
// rotation may already have replaced the secret, a delivery retry or a test
// event may already have been sent. Their errors wrap ErrOutcomeUnknown
// when the outcome is open.

// CreateWebhook creates a subscription (POST /webhooks). The answer's Key
// is the signing secret, shown only here. On ErrOutcomeUnknown, list the
// webhooks and look for one with the same URL before creating again.
func (c *Client) CreateWebhook(ctx context.Context, in WebhookCreate) (Webhook, error) {
	route, err := c.webhookRoute(ctx, RouteCreateWebhook)
	if err != nil {
		return Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	wh, err := get[Webhook](ctx, c, request{route: route, body: in})
	if err == nil && wh.ID == "" {
		err = fmt.Errorf("%w: answer holds no webhook id", ErrOutcomeUnknown)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	return wh, nil
}

// ListWebhooks returns the workspace's subscriptions (GET /webhooks). A
// 404 in the form in use means the service moved them: the form is found
// out again.
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	form, whs, err := c.webhookRoutes(ctx, "")
	if err == nil && whs == nil {
		whs, err = get[[]Webhook](ctx, c, request{route: WebhookRoute(RouteListWebhooks, form)})
		if IsNotFound(err) {
			_, whs, err = c.webhookRoutes(ctx, form)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return whs, nil
}

// GetWebhook returns the subscription with id (GET /webhooks/{id}).
func (c *Client) GetWebhook(ctx context.Context, id string) (Webhook, error) {
	route, err := c.webhookRoute(ctx, RouteGetWebhook, id)
	var wh Webhook
	if err == nil {
		wh, err = get[Webhook](ctx, c, request{route: route, args: []string{id}})
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("get webhook %s: %w", id, err)
	}
	return wh, nil
}

// UpdateWebhook applies the partial update p (PATCH /webhooks/{id}).
func (c *Client) UpdateWebhook(ctx context.Context, id string, p WebhookPatch) (Webhook, error) {
	route, err := c.webhookRoute(ctx, RouteUpdateWebhook, id)
	var wh Webhook
	if err == nil {
		wh, err = get[Webhook](ctx, c, request{route: route, args: []string{id}, body: p})
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("patch webhook %s: %w", id, err)
	}
	return wh, nil
}

// DeleteWebhook deletes the subscription with id (DELETE /webhooks/{id}).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	route, err := c.webhookRoute(ctx, RouteDeleteWebhook, id)
	if err == nil {
		err = c.do(ctx, request{route: route, args: []string{id}}, nil)
	}
	if err != nil {
		return fmt.Errorf("delete webhook %s: %w", id, err)
	}
	return nil
}

// RotateWebhookSecret replaces the subscription's signing secret
// (POST /webhooks/{id}/rotate) and returns the new one. On
// ErrOutcomeUnknown the old secret may already be replaced: rotate again
// to learn a secret for sure (both may sign for a while).
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (SigningSecret, error) {
	route, err := c.webhookRoute(ctx, RouteRotateWebhookSecret, id)
	if err != nil {
		return SigningSecret{}, fmt.Errorf("rotate webhook secret %s: %w", id, err)
	}
	s, err := get[SigningSecret](ctx, c, request{route: route, args: []string{id}})
	if err == nil && s.Key == "" {
		err = fmt.Errorf("%w: answer holds no key", ErrOutcomeUnknown)
	}
	if err != nil {
		return SigningSecret{}, fmt.Errorf("rotate webhook secret %s: %w", id, err)
	}
	return s, nil
}

// WebhookDeliveries returns the subscription's delivery history
// (GET /webhooks/{id}/events).
func (c *Client) WebhookDeliveries(ctx context.Context, id string) ([]Delivery, error) {
	route, err := c.webhookRoute(ctx, RouteWebhookDeliveries, id)
	var ds []Delivery
	if err == nil {
		ds, err = get[[]Delivery](ctx, c, request{route: route, args: []string{id}})
	}
	if err != nil {
		return nil, fmt.Errorf("webhook deliveries %s: %w", id, err)
	}
	return ds, nil
}

// RetryDelivery asks the service to deliver an event again
// (POST /webhooks/{id}/events/{eventId}/retry).
func (c *Client) RetryDelivery(ctx context.Context, webhookID, eventID string) error {
	route, err := c.webhookRoute(ctx, RouteRetryDelivery, webhookID, eventID)
	if err == nil {
		err = c.do(ctx, request{route: route, args: []string{webhookID, eventID}}, nil)
	}
	if err != nil {
		return fmt.Errorf("retry delivery %s of webhook %s: %w", eventID, webhookID, err)
	}
	return nil
}

// SendTestEvent asks the service to send a test event to the subscription
// (POST /webhooks/{id}/events/test).
func (c *Client) SendTestEvent(ctx context.Context, webhookID string) error {
	route, err := c.webhookRoute(ctx, RouteSendTestEvent, webhookID)
	if err == nil {
		err = c.do(ctx, request{route: route, args: []string{webhookID}}, nil)
	}
	if err != nil {
		return fmt.Errorf("send test event to webhook %s: %w", webhookID, err)
	}
	return nil
}
