package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Routes where the spec and the service's published OpenAPI document
// differ get a fallback rather than a hard stop (workspace/FACTS.md):
//
//   - The credential check asks GET /v1/organization; a service that
//     answers it 404 (a version without the route) is asked the
//     custom-field list instead, which every version has.
//   - The webhook routes are written without /v1 in the spec and under
//     /v1 in the published document. The client finds out once which form
//     the service answers (GET /webhooks, and on a 404 GET /v1/webhooks),
//     tells ClientOptions.WebhookRoutesFound so that the caller remembers
//     it, and uses it thereafter.

// CheckAccess checks that the service answers the API key, and returns
// the route that answered: GET /v1/organization, or, once that answered
// 404, GET /v1/contact-custom-fields (from then on asked directly). A
// refused key fails with an error IsUnauthorized tells.
func (c *Client) CheckAccess(ctx context.Context) (string, error) {
	if !c.routes.noOrganization.Load() {
		_, err := c.Organization(ctx)
		if !IsNotFound(err) {
			return RouteOrganization, err
		}
		if !c.routes.noOrganization.Swap(true) {
			c.log.WithField(logfield.Route, RouteOrganization).WithField(logfield.Instead, RouteCustomFields).
				Warn("workspace api answered 404 to the organization route (a version without it): the API key is checked with the custom-field list instead")
		}
	}
	if _, err := c.CustomFieldDefinitions(ctx); err != nil {
		return RouteCustomFields, fmt.Errorf("check access (organization route answers 404): %w", err)
	}
	return RouteCustomFields, nil
}

// WebhookRoutesForm returns the form of the webhook routes the client
// uses: WebhookRoutesSpec or WebhookRoutesV1, or "" until it found out.
func (c *Client) WebhookRoutesForm() string {
	c.routes.mu.Lock()
	defer c.routes.mu.Unlock()
	return c.routes.webhookForm
}

// ErrNoWebhookRoutes means the service answered 404 to the webhook list
// in both forms.
var ErrNoWebhookRoutes = errors.New("the service answers neither GET /webhooks nor GET /v1/webhooks")

// webhookRoute returns route (a webhook route in the spec's form) in the
// form the service answers, finding the form out first when needed. Path
// arguments are checked first: a call refused anyway sends nothing.
func (c *Client) webhookRoute(ctx context.Context, route string, args ...string) (string, error) {
	if _, _, err := splitRoute(route, args); err != nil {
		return "", err
	}
	form, _, err := c.webhookRoutes(ctx, "")
	if err != nil {
		return "", err
	}
	return WebhookRoute(route, form), nil
}

// webhookRoutes returns the form of the webhook routes. When it is not
// known, or is stale (the form that answered 404 to a list), it finds it
// out by listing the webhooks in each form, the spec's first, and returns
// that list too (whs, nil when no list was made).
func (c *Client) webhookRoutes(ctx context.Context, stale string) (form string, whs []Webhook, err error) {
	c.routes.mu.Lock()
	defer c.routes.mu.Unlock()
	if c.routes.webhookForm != "" && c.routes.webhookForm != stale {
		return c.routes.webhookForm, nil, nil
	}
	var tried []error
	for _, f := range []string{WebhookRoutesSpec, WebhookRoutesV1} {
		route := WebhookRoute(RouteListWebhooks, f)
		whs, err := get[[]Webhook](ctx, c, request{route: route})
		if IsNotFound(err) {
			tried = append(tried, err)
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("find webhook routes: %w", err)
		}
		if whs == nil {
			whs = []Webhook{}
		}
		log := c.log.WithFields(logrus.Fields{logfield.Form: f, logfield.Route: route})
		if stale != "" {
			log = log.WithField(logfield.Previous, stale)
		}
		log.Info("workspace api webhook routes found")
		c.routes.webhookForm = f
		if c.routes.found != nil {
			c.routes.found(f)
		}
		return f, whs, nil
	}
	return "", nil, fmt.Errorf("find webhook routes: %w: %w", ErrNoWebhookRoutes, errors.Join(tried...))
}
