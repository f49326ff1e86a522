// Package emulator serves the workspace API of the spec and the facts note
// in memory, for tests and demos, the way net/http/httptest serves a
// handler: New gives an http.Handler, NewServer a listening server, and
// `syncd emulator` runs one from the command line.
//
// Refusals answer with the spec's error body (message listing each
// "path: message", a seven-digit code, status, docs, title, errors[] with
// path, message, value and schema, pattern included on pattern
// violations). Codes follow the table in errors.go.
//
// # Rules enforced
//
// Requests: Authorization holds the raw key (missing or wrong: 401; the
// read-only key on a write: 403). The version header (name and value are
// options) is required and must equal the version on webhook operations
// (400); on other operations it may be omitted, but a wrong value is
// refused (400). Each key has a token bucket (default 10/s, burst 10);
// over it: 429 with the error body and no Retry-After unless asked for.
//
// Contacts: defaultFields and defaultFields.firstName required on create
// (non-empty; not clearable by PATCH); externalId 1-75 or null; source
// 1-72 on create, 1-75 on update, default "public-api" on the API's
// creates; reserved sources device, csv, other, the service's name,
// zapier and google-people, and the prefixes (service name, csv), compared
// without regard to case; sourceUrl an absolute URI with scheme and host of
// 1-200; e-mail values single addresses (net/mail, no display name); phone
// values E.164 (^\+[1-9]\d{1,14}$); custom field keys defined, values one
// at most except for multi-select, and well-formed for boolean, number,
// date and url; unknown properties and wrong types refused; create items
// carry only name and value. PATCH is partial (omitted kept, null clears;
// items addressed by id, else by name, else appended; a null value removes
// the item; custom fields by key or id, an empty value removes) and always
// sets updatedAt, strictly later than before. DELETE answers 204.
// Contacts are not unique by (source, externalId): the public service is
// not known to enforce it.
//
// List: externalIds and sources repeatable in both encodings (name=a and
// name[]=a), 50 values at most each, each 1-75 long; maxResults 1-50,
// default 10; pageToken from a previous page. Order is creation order;
// paging is stable while contacts are created or deleted;
// nextPageToken is null on the last page.
//
// Webhooks: ids are digits (a path id that is not: 400 "Invalid Id",
// code 0303400, errors[0].path /webhookId); events at least one, each
// from the spec's list; resourceIds each ^PN(.*)$, and null, [] or ["*"]
// clear it; no resourceIds on a webhook of contact events (the emulator's
// decision, since contact events are workspace-wide); status enabled or
// disabled; url an absolute URI; at most 50 webhooks (a 51st: 400, as the
// spec lists no 409 for webhook operations). The signing secret (whsec_)
// is returned on create and rotate only.
//
// Webhook routes are served both as the spec writes them (/webhooks...)
// and under /v1 as the published OpenAPI document has them
// (/v1/webhooks...), each counted under its own route; Options.WebhookRoutes
// serves one form only. GET /v1/organization and GET /organization answer
// unless Options.NoOrganization (then 404, as versions without the route).
//
// Deliveries: every contact change through the API or the app endpoints
// sends contact.updated (creates included) or contact.deleted to each
// enabled webhook subscribed to it, in the envelope of the service's
// webhook guide, {id: "EV...", object: "event", apiVersion (the
// webhook's), createdAt, type, data: {object: <the contact, with
// "object": "contact">}} (data.resource instead with
// Options.WebhookEnvelope "resource"), signed with Standard Webhooks headers
// (both secrets during RotationGrace after a rotation; optionally the
// legacy header too), in order of the changes, retried with doubling
// waits on non-2xx answers and transport errors up to MaxAttempts, and
// recorded in the delivery history.
//
// Faults, drawn from a sequence seeded by Options.Seed for each
// authenticated, admitted API request: 500, 429, latency, and a lost
// answer (the request is applied, then the connection is closed).
//
// # Not enforced
//
// Rules the spec does not show are not invented: allowed values of
// multi-select options, which defaultFields members other than firstName
// are required, e-mail and phone item names, https-only webhook URLs, and
// the real service's order of checks. The other operations of the spec
// (calls, messages, conversations, users, tasks, phone numbers) are not
// served. Event payloads other than contacts are not generated.
//
// # Back door
//
// Under /_emulator/, without the API key, rate limit or faults, and not
// counted in Stats: GET contacts and webhooks, GET stats, POST
// app/contacts and PATCH|DELETE app/contacts/{id} (a person's edits in
// the product's app: the same rules, except that the app's creates have no
// default source and may use reserved ones), POST reset and POST faults
// {"rate": P}.
package emulator
