// Package workspace is syncd's side of the business phone workspace: the
// resources of its HTTP API (contacts, custom fields, webhooks, the
// organization), a rate-limited client for them, and the Standard Webhooks
// signature scheme its deliveries use. The emulator in workspace/emulator
// serves the same contract for tests and demos.
//
// The contract is the spec in shared/seeds plus the settled facts in
// shared/notes/workspace-api-facts.md; every value the service may change
// (header name, version, rate) is a setting or a single constant here.
package workspace

import (
	"bytes"
	"encoding/json"
	"time"
)

// Defaults of the public service, each overridable by configuration.
const (
	DefaultVersionHeader = "Service-Api-Version"
	DefaultVersion       = "2026-03-30"
	DefaultRateLimit     = 10 // requests per second per API key
	DefaultBurst         = 10
	MaxListFilterValues  = 50 // values of externalIds or sources in one list call
	MaxPageSize          = 50 // maxResults of a contact list page
	DefaultPageSize      = 10
	MaxWebhooks          = 50
	MaxExternalIDLen     = 75
	MaxSourceLenCreate   = 72
	MaxSourceLenUpdate   = 75
	MaxSourceURLLen      = 200
)

// Event names syncd subscribes to.
const (
	EventContactUpdated = "contact.updated"
	EventContactDeleted = "contact.deleted"
)

// Webhook statuses.
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// Opt is an optional, nullable JSON value for partial updates: the zero Opt
// is omitted (with the `omitzero` tag), Null() is sent as JSON null, and
// Some(v) as v. Decoding records which of the three a body held.
type Opt[T any] struct {
	set  bool
	null bool
	v    T
}

// Some returns an Opt holding v.
func Some[T any](v T) Opt[T] { return Opt[T]{set: true, v: v} }

// Null returns an Opt that is sent as JSON null (clear the field).
func Null[T any]() Opt[T] { return Opt[T]{set: true, null: true} }

// IsZero reports whether the Opt is absent; encoding/json omits it then.
func (o Opt[T]) IsZero() bool { return !o.set }

// IsSet reports whether the field was present (as a value or as null).
func (o Opt[T]) IsSet() bool { return o.set }

// IsNull reports whether the field was present as JSON null.
func (o Opt[T]) IsNull() bool { return o.set && o.null }

// Get returns the value and whether one (not null, not absent) is held.
func (o Opt[T]) Get() (T, bool) { return o.v, o.set && !o.null }

// MarshalJSON encodes null or the value.
func (o Opt[T]) MarshalJSON() ([]byte, error) {
	if !o.set || o.null {
		return []byte("null"), nil
	}
	return json.Marshal(o.v)
}

// UnmarshalJSON records presence, null or the value.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.null = true
		var zero T
		o.v = zero
		return nil
	}
	o.null = false
	return json.Unmarshal(b, &o.v)
}

// Contact is a workspace contact as the API returns it.
type Contact struct {
	ID              string        `json:"id"`
	ExternalID      *string       `json:"externalId"`
	Source          *string       `json:"source"`
	SourceURL       *string       `json:"sourceUrl"`
	DefaultFields   DefaultFields `json:"defaultFields"`
	CustomFields    []CustomField `json:"customFields"`
	CreatedAt       time.Time     `json:"createdAt"`
	UpdatedAt       time.Time     `json:"updatedAt"`
	CreatedByUserID string        `json:"createdByUserId,omitempty"`
}

// DefaultFields are a contact's built-in fields; nil means unset (null).
type DefaultFields struct {
	Company      *string `json:"company"`
	FirstName    *string `json:"firstName"`
	LastName     *string `json:"lastName"`
	Role         *string `json:"role"`
	Emails       []Item  `json:"emails"`
	PhoneNumbers []Item  `json:"phoneNumbers"`
}

// Item is one labelled e-mail address or phone number of a contact. Name is
// the label ("work", "mobile"); ID is assigned by the service.
type Item struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CustomField is a custom field value on a contact as returned by the API:
// Type is the field's type, Value in either form (see FieldValue).
type CustomField struct {
	ID    string     `json:"id,omitempty"`
	Key   string     `json:"key"`
	Name  string     `json:"name,omitempty"`
	Type  string     `json:"type,omitempty"`
	Value FieldValue `json:"value"`
}

// CustomFieldValue is a custom field in a create or update request. ID is
// optional and only meaningful on update. The client sends Value in the
// form its workspace takes (ClientOptions.CustomFieldValues), converted
// by the field's type: callers may give the text of any value as
// ListValue.
type CustomFieldValue struct {
	ID    string     `json:"id,omitempty"`
	Key   string     `json:"key,omitempty"`
	Value FieldValue `json:"value"`
}

// ContactCreate is the body of POST /v1/contacts.
type ContactCreate struct {
	DefaultFields   DefaultFieldsInput `json:"defaultFields"`
	CustomFields    []CustomFieldValue `json:"customFields,omitempty"`
	CreatedByUserID string             `json:"createdByUserId,omitempty"`
	Source          string             `json:"source,omitempty"`
	SourceURL       string             `json:"sourceUrl,omitempty"`
	ExternalID      string             `json:"externalId,omitempty"`
}

// DefaultFieldsInput are the built-in fields of a create request; empty
// strings are omitted. Items carry only name and value.
type DefaultFieldsInput struct {
	Company      string `json:"company,omitempty"`
	FirstName    string `json:"firstName,omitempty"`
	LastName     string `json:"lastName,omitempty"`
	Role         string `json:"role,omitempty"`
	Emails       []Item `json:"emails,omitempty"`
	PhoneNumbers []Item `json:"phoneNumbers,omitempty"`
}

// ContactPatch is the body of PATCH /v1/contacts/{id}: only the fields set
// are sent; Null() clears a field.
type ContactPatch struct {
	ExternalID    Opt[string]         `json:"externalId,omitzero"`
	Source        Opt[string]         `json:"source,omitzero"`
	SourceURL     Opt[string]         `json:"sourceUrl,omitzero"`
	DefaultFields *DefaultFieldsPatch `json:"defaultFields,omitempty"`
	CustomFields  []CustomFieldValue  `json:"customFields,omitempty"`
}

// IsEmpty reports whether the patch would change nothing.
func (p ContactPatch) IsEmpty() bool {
	return !p.ExternalID.IsSet() && !p.Source.IsSet() && !p.SourceURL.IsSet() &&
		(p.DefaultFields == nil || p.DefaultFields.IsEmpty()) && len(p.CustomFields) == 0
}

// DefaultFieldsPatch are the built-in fields of an update.
type DefaultFieldsPatch struct {
	Company      Opt[string] `json:"company,omitzero"`
	FirstName    Opt[string] `json:"firstName,omitzero"`
	LastName     Opt[string] `json:"lastName,omitzero"`
	Role         Opt[string] `json:"role,omitzero"`
	Emails       []ItemPatch `json:"emails,omitempty"`
	PhoneNumbers []ItemPatch `json:"phoneNumbers,omitempty"`
}

// IsEmpty reports whether no built-in field is set.
func (p DefaultFieldsPatch) IsEmpty() bool {
	return !p.Company.IsSet() && !p.FirstName.IsSet() && !p.LastName.IsSet() && !p.Role.IsSet() &&
		len(p.Emails) == 0 && len(p.PhoneNumbers) == 0
}

// ItemPatch changes one e-mail or phone item. An item with ID addresses
// that item; without ID it addresses the contact's first item of the same
// Name, or is added when there is none. A nil Value (JSON null) removes
// the addressed item.
type ItemPatch struct {
	ID    string  `json:"id,omitempty"`
	Name  string  `json:"name,omitempty"`
	Value *string `json:"value"`
}

// ListContactsParams are the query of GET /v1/contacts.
type ListContactsParams struct {
	ExternalIDs []string // at most MaxListFilterValues
	Sources     []string // at most MaxListFilterValues
	MaxResults  int      // 1..MaxPageSize; 0 means MaxPageSize for iterators
	PageToken   string
}

// ContactPage is one page of GET /v1/contacts. TotalItems is known to be
// inaccurate on the public service: never rely on it.
type ContactPage struct {
	Data          []Contact `json:"data"`
	TotalItems    int       `json:"totalItems"`
	NextPageToken *string   `json:"nextPageToken"`
}

// CustomFieldDefinition is a custom field defined in the workspace's app.
type CustomFieldDefinition struct {
	Name string `json:"name"`
	Key  string `json:"key"`
	Type string `json:"type"` // one of FieldTypes
}

// Organization is the workspace's organization resource.
type Organization struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	SubscriptionStatus string    `json:"subscriptionStatus"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
}

// Webhook is a webhook subscription. Key (the whsec_ signing secret) is
// present only in the answer to a create.
type Webhook struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"orgId"`
	Label       string    `json:"label"`
	Status      string    `json:"status"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	ResourceIDs []string  `json:"resourceIds,omitempty"`
	APIVersion  string    `json:"apiVersion"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	Key         string    `json:"key,omitempty"`
}

// WebhookCreate is the body of POST /webhooks.
type WebhookCreate struct {
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	ResourceIDs []string `json:"resourceIds,omitempty"`
	Status      string   `json:"status,omitempty"`
	Label       string   `json:"label,omitempty"`
}

// WebhookPatch is the body of PATCH /webhooks/{id}. ResourceIDs set to
// Null(), an empty list or ["*"] clears the phone-number filter.
type WebhookPatch struct {
	URL         Opt[string]   `json:"url,omitzero"`
	Events      []string      `json:"events,omitempty"`
	ResourceIDs Opt[[]string] `json:"resourceIds,omitzero"`
	Status      Opt[string]   `json:"status,omitzero"`
	Label       Opt[string]   `json:"label,omitzero"`
}

// SigningSecret is the answer of POST /webhooks/{id}/rotate.
type SigningSecret struct {
	Key string `json:"key"`
}

// Delivery is one entry of a webhook's delivery history
// (GET /webhooks/{id}/events). The spec does not show its shape; this is
// the shape the emulator serves and the client reads.
type Delivery struct {
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhookId"`
	EventID        string     `json:"eventId"`
	Type           string     `json:"type"`
	Status         string     `json:"status"` // pending, delivered, failed
	Attempts       int        `json:"attempts"`
	ResponseStatus int        `json:"responseStatus,omitempty"`
	LastError      string     `json:"lastError,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
	UpdatedAt      time.Time  `json:"updatedAt"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt,omitempty"`
}

// Event is the envelope of a webhook delivery. The service's webhook
// guide shows every event as {id, object: "event", apiVersion, createdAt,
// type, data: {object: <the resource>}} (workspace/FACTS.md).
type Event struct {
	ID string `json:"id"`
	// Object is the envelope's discriminator, EventObject.
	Object     string    `json:"object,omitempty"`
	APIVersion string    `json:"apiVersion"`
	CreatedAt  time.Time `json:"createdAt"`
	Type       string    `json:"type"`
	Data       EventData `json:"data"`
}

// Envelope discriminators: the "object" of an event, and of the contact
// an event carries.
const (
	EventObject   = "event"
	ContactObject = "contact"
)

// Where an event carries its resource.
const (
	// DataObject is the documented place: data.object.
	DataObject = "data.object"
	// DataResource is the place of an earlier reading of the
	// documentation, still read (and written by catch-ups of syncd
	// versions before the fix) so that no inbox event is lost.
	DataResource = "data.resource"
)

// EventData holds the resource an event is about: in Object as the
// service documents it, or in Resource, the shape earlier syncd versions
// and emulators used. Set one of them.
type EventData struct {
	Object   json.RawMessage `json:"object,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"`
}

// Payload returns the resource and where it was found: data.object when
// it holds a value, else data.resource. It returns "" and nil when
// neither holds one (absent or null).
func (d EventData) Payload() (json.RawMessage, string) {
	if present(d.Object) {
		return d.Object, DataObject
	}
	if present(d.Resource) {
		return d.Resource, DataResource
	}
	return nil, ""
}

// present reports whether raw holds a JSON value other than null.
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// ErrorBody is the service's error answer.
type ErrorBody struct {
	Message     string       `json:"message"`
	Code        string       `json:"code,omitempty"`
	Status      int          `json:"status,omitempty"`
	Docs        string       `json:"docs,omitempty"`
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	Trace       string       `json:"trace,omitempty"`
	Errors      []FieldError `json:"errors,omitempty"`
}

// FieldError is one entry of an error body's errors[].
type FieldError struct {
	Path    string         `json:"path"`
	Message string         `json:"message"`
	Value   any            `json:"value,omitempty"`
	Schema  map[string]any `json:"schema"`
}
