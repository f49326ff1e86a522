package workspace

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strconv"
)

// envelope is the {data: ...} wrapper of every successful answer.
type envelope[T any] struct {
	Data T `json:"data"`
}

// get calls r and returns the data of its answer.
func get[T any](ctx context.Context, c *Client, r request) (T, error) {
	var env envelope[T]
	err := c.do(ctx, r, &env)
	return env.Data, err
}

// CreateContact creates a contact (POST /v1/contacts). A 429 is retried;
// anything else that leaves the outcome open (transport failure, lost or
// undecodable answer, 5xx) returns an error wrapping ErrOutcomeUnknown:
// look the contact up by its externalId before creating it again.
// Custom field values are sent in the client's form for their field's
// type (a value that does not fit is a *FieldValueError, before any call);
// a refusal naming a custom field reloads the definitions, and the create
// is sent once more when a field's type changed.
func (c *Client) CreateContact(ctx context.Context, in ContactCreate) (Contact, error) {
	ct, err := c.createContact(ctx, in)
	if err != nil && c.refreshAfter(ctx, err, in.CustomFields) {
		ct, err = c.createContact(ctx, in)
	}
	if err != nil {
		return Contact{}, fmt.Errorf("create contact: %w", err)
	}
	return ct, nil
}

func (c *Client) createContact(ctx context.Context, in ContactCreate) (Contact, error) {
	var err error
	if in.CustomFields, err = c.encodeFields(in.CustomFields); err != nil {
		return Contact{}, err
	}
	ct, err := get[Contact](ctx, c, request{route: RouteCreateContact, body: in})
	if err == nil && ct.ID == "" {
		err = fmt.Errorf("%w: answer holds no contact id", ErrOutcomeUnknown)
	}
	return ct, err
}

// GetContact returns the contact with id (GET /v1/contacts/{id}).
func (c *Client) GetContact(ctx context.Context, id string) (Contact, error) {
	ct, err := get[Contact](ctx, c, request{route: RouteGetContact, args: []string{id}})
	if err != nil {
		return Contact{}, fmt.Errorf("get contact %s: %w", id, err)
	}
	return ct, nil
}

// UpdateContact applies the partial update p (PATCH /v1/contacts/{id}) and
// returns the contact as the service holds it afterwards. Custom field
// values are sent as CreateContact sends them.
func (c *Client) UpdateContact(ctx context.Context, id string, p ContactPatch) (Contact, error) {
	ct, err := c.updateContact(ctx, id, p)
	if err != nil && c.refreshAfter(ctx, err, p.CustomFields) {
		ct, err = c.updateContact(ctx, id, p)
	}
	if err != nil {
		return Contact{}, fmt.Errorf("patch contact %s: %w", id, err)
	}
	return ct, nil
}

func (c *Client) updateContact(ctx context.Context, id string, p ContactPatch) (Contact, error) {
	var err error
	if p.CustomFields, err = c.encodeFields(p.CustomFields); err != nil {
		return Contact{}, err
	}
	return get[Contact](ctx, c, request{route: RouteUpdateContact, args: []string{id}, body: p})
}

// DeleteContact deletes the contact with id (DELETE /v1/contacts/{id}).
// A retried delete may answer 404 when an earlier attempt was applied:
// callers that only want the contact gone can treat IsNotFound as done.
func (c *Client) DeleteContact(ctx context.Context, id string) error {
	if err := c.do(ctx, request{route: RouteDeleteContact, args: []string{id}}, nil); err != nil {
		return fmt.Errorf("delete contact %s: %w", id, err)
	}
	return nil
}

// query checks p against the service's limits and encodes it, repeating
// the key of each filter value: externalIds=a&externalIds=b.
func (p ListContactsParams) query() (url.Values, error) {
	if n := len(p.ExternalIDs); n > MaxListFilterValues {
		return nil, fmt.Errorf("%w: %d externalIds in one list call, at most %d", ErrInvalidRequest, n, MaxListFilterValues)
	}
	if n := len(p.Sources); n > MaxListFilterValues {
		return nil, fmt.Errorf("%w: %d sources in one list call, at most %d", ErrInvalidRequest, n, MaxListFilterValues)
	}
	if p.MaxResults < 0 || p.MaxResults > MaxPageSize {
		return nil, fmt.Errorf("%w: maxResults %d, want 1 to %d", ErrInvalidRequest, p.MaxResults, MaxPageSize)
	}
	q := url.Values{}
	for _, v := range p.ExternalIDs {
		q.Add("externalIds", v)
	}
	for _, v := range p.Sources {
		q.Add("sources", v)
	}
	if p.MaxResults > 0 {
		q.Set("maxResults", strconv.Itoa(p.MaxResults))
	}
	if p.PageToken != "" {
		q.Set("pageToken", p.PageToken)
	}
	return q, nil
}

// ListContacts returns one page of contacts (GET /v1/contacts). More than
// MaxListFilterValues values in a filter, or a MaxResults out of 0 to
// MaxPageSize, is refused before any call (IsValidation).
func (c *Client) ListContacts(ctx context.Context, p ListContactsParams) (ContactPage, error) {
	q, err := p.query()
	if err != nil {
		return ContactPage{}, fmt.Errorf("list contacts: %w", err)
	}
	var page ContactPage
	if err := c.do(ctx, request{route: RouteListContacts, query: q}, &page); err != nil {
		return ContactPage{}, fmt.Errorf("list contacts: %w", err)
	}
	return page, nil
}

// Contacts iterates over every contact matching p's filters, following
// nextPageToken to the last page, in pages of p.MaxResults (MaxPageSize
// when 0). An error is yielded once, as the last element.
func (c *Client) Contacts(ctx context.Context, p ListContactsParams) iter.Seq2[Contact, error] {
	return func(yield func(Contact, error) bool) {
		if p.MaxResults == 0 {
			p.MaxResults = MaxPageSize
		}
		seen := map[string]bool{}
		for {
			page, err := c.ListContacts(ctx, p)
			if err != nil {
				yield(Contact{}, err)
				return
			}
			for _, ct := range page.Data {
				if !yield(ct, nil) {
					return
				}
			}
			if page.NextPageToken == nil || *page.NextPageToken == "" {
				return
			}
			next := *page.NextPageToken
			if seen[next] {
				yield(Contact{}, fmt.Errorf("list contacts: page token %q came back: %w", next, errPagingLoop))
				return
			}
			seen[next] = true
			p.PageToken = next
		}
	}
}

var errPagingLoop = errors.New("paging does not advance")

// ContactsByExternalIDs returns the contacts whose externalId is one of
// externalIDs, with source source ("" for any source). The ids are
// deduplicated (empty ones dropped: no contact has one) and looked up in
// chunks of MaxListFilterValues, each chunk followed to its last page.
func (c *Client) ContactsByExternalIDs(ctx context.Context, source string, externalIDs []string) ([]Contact, error) {
	ids := make([]string, 0, len(externalIDs))
	seen := make(map[string]bool, len(externalIDs))
	for _, id := range externalIDs {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	var out []Contact
	for start := 0; start < len(ids); start += MaxListFilterValues {
		end := min(start+MaxListFilterValues, len(ids))
		p := ListContactsParams{ExternalIDs: ids[start:end], MaxResults: MaxPageSize}
		if source != "" {
			p.Sources = []string{source}
		}
		for ct, err := range c.Contacts(ctx, p) {
			if err != nil {
				return nil, fmt.Errorf("contacts by external id: %w", err)
			}
			out = append(out, ct)
		}
	}
	return out, nil
}

// CustomFieldDefinitions returns the workspace's custom fields
// (GET /v1/contact-custom-fields).
func (c *Client) CustomFieldDefinitions(ctx context.Context) ([]CustomFieldDefinition, error) {
	defs, err := get[[]CustomFieldDefinition](ctx, c, request{route: RouteCustomFields})
	if err != nil {
		return nil, fmt.Errorf("custom field definitions: %w", err)
	}
	return defs, nil
}

// Organization returns the workspace's organization (GET /v1/organization);
// syncd calls it at start-up to check the API key.
func (c *Client) Organization(ctx context.Context) (Organization, error) {
	org, err := get[Organization](ctx, c, request{route: RouteOrganization})
	if err != nil {
		return Organization{}, fmt.Errorf("get organization: %w", err)
	}
	return org, nil
}
