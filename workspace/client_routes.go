package workspace

import "strings"

// Route templates of the operations the client calls, as "METHOD /path"
// with {param} placeholders. They name calls in errors, logs and
// RequestInfo, and are the keys the emulator counts requests by.
//
// The webhook routes are written as the spec writes them, without /v1;
// the service's published OpenAPI document has them under /v1 like every
// other route. WebhookRoute gives a route in either form, and the client
// finds out once which form the service answers (see
// ClientOptions.WebhookRoutes).
const (
	RouteCreateContact       = "POST /v1/contacts"
	RouteGetContact          = "GET /v1/contacts/{id}"
	RouteUpdateContact       = "PATCH /v1/contacts/{id}"
	RouteDeleteContact       = "DELETE /v1/contacts/{id}"
	RouteListContacts        = "GET /v1/contacts"
	RouteCustomFields        = "GET /v1/contact-custom-fields"
	RouteOrganization        = "GET /v1/organization"
	RouteCreateWebhook       = "POST /webhooks"
	RouteListWebhooks        = "GET /webhooks"
	RouteGetWebhook          = "GET /webhooks/{id}"
	RouteUpdateWebhook       = "PATCH /webhooks/{id}"
	RouteDeleteWebhook       = "DELETE /webhooks/{id}"
	RouteRotateWebhookSecret = "POST /webhooks/{id}/rotate"
	RouteWebhookDeliveries   = "GET /webhooks/{id}/events"
	RouteRetryDelivery       = "POST /webhooks/{id}/events/{eventId}/retry"
	RouteSendTestEvent       = "POST /webhooks/{id}/events/test"
)

// WebhookRoutes are the route constants of the webhook operations, in the
// spec's form.
var WebhookRoutes = []string{RouteCreateWebhook, RouteListWebhooks, RouteGetWebhook, RouteUpdateWebhook,
	RouteDeleteWebhook, RouteRotateWebhookSecret, RouteWebhookDeliveries, RouteRetryDelivery, RouteSendTestEvent}

// Forms of the webhook routes.
const (
	// WebhookRoutesSpec is the spec's form: /webhooks, /webhooks/{id}, ...
	WebhookRoutesSpec = "spec"
	// WebhookRoutesV1 is the published OpenAPI document's form:
	// /v1/webhooks, /v1/webhooks/{id}, ...
	WebhookRoutesV1 = "v1"
)

// ValidWebhookRoutes reports whether form is a form of the webhook routes.
func ValidWebhookRoutes(form string) bool {
	return form == WebhookRoutesSpec || form == WebhookRoutesV1
}

// WebhookRoute returns route, a webhook route in the spec's form, in
// form: unchanged for WebhookRoutesSpec, under /v1 for WebhookRoutesV1.
func WebhookRoute(route, form string) string {
	if form != WebhookRoutesV1 {
		return route
	}
	method, path, ok := strings.Cut(route, " ")
	if !ok || strings.HasPrefix(path, "/v1/") {
		return route
	}
	return method + " /v1" + path
}
