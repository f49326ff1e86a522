package workspace

// Route templates of the operations the client calls, as "METHOD /path"
// with {param} placeholders. They name calls in errors, logs and
// RequestInfo, and are the keys the emulator counts requests by.
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
