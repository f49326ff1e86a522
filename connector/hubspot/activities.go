package hubspot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/activitytext"
)

// Activities (issue 33, FACTS.md "Calls and texts"): a call is a `calls`
// object, a text a `communications` object with channel SMS, each
// created associated with the contact (HUBSPOT_DEFINED types 194 and
// 81), and replaced by PATCH when a later event of the call fills it in.
// Each carries the key syncd sets in the custom property
// ActivityKeyProperty, which the writer creates (in its own property
// group) the first time it needs it; FindActivity searches on it.

// ActivityKeyProperty is the custom property holding syncd's key of an
// activity, on calls and communications.
const ActivityKeyProperty = "syncd_activity_key"

// activityGroup is the property group of ActivityKeyProperty.
const activityGroup = "syncd"

// Association types from an engagement to a contact.
const (
	assocCallToContact = 194
	assocCommToContact = 81
)

var _ connector.ActivityWriter = (*Source)(nil)

// activityState is what the writer learns once per process: whether the
// key property exists on each object type, and owners by e-mail.
type activityState struct {
	mu     sync.Mutex
	hasKey map[string]bool
	owners map[string]string // lower-cased e-mail -> owner id ("" none)
}

func (s *Source) acts() *activityState {
	s.actOnce.Do(func() { s.act = &activityState{hasKey: map[string]bool{}, owners: map[string]string{}} })
	return s.act
}

// ActivityKinds: HubSpot logs calls and texts.
func (s *Source) ActivityKinds() []connector.ActivityKind {
	return []connector.ActivityKind{connector.ActivityCall, connector.ActivityMessage}
}

func objectOf(kind connector.ActivityKind) (objectType string, assoc int) {
	if kind == connector.ActivityMessage {
		return "communications", assocCommToContact
	}
	return "calls", assocCallToContact
}

// FindActivity searches the object type for the key (the search API's
// EQ filter on ActivityKeyProperty).
func (s *Source) FindActivity(ctx context.Context, kind connector.ActivityKind, key, recordID string) (string, error) {
	typ, _ := objectOf(kind)
	has, err := s.keyProperty(ctx, typ, false)
	if err != nil || !has {
		return "", err // no property: nothing was written with it
	}
	req := map[string]any{
		"filterGroups": []map[string]any{{"filters": []map[string]any{{"propertyName": ActivityKeyProperty, "operator": "EQ", "value": key}}}},
		"properties":   []string{ActivityKeyProperty},
		"limit":        1,
	}
	var ans struct {
		Results []struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	if _, err := s.c.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/" + typ + "/search", body: req, search: true, idempotent: true}, &ans); err != nil {
		return "", fmt.Errorf("search %s for %s: %w", typ, key, err)
	}
	if len(ans.Results) == 0 {
		return "", nil
	}
	return ans.Results[0].ID, nil
}

// WriteActivity creates the engagement associated with the contact, or
// replaces the properties of engagement id.
func (s *Source) WriteActivity(ctx context.Context, id string, a connector.Activity) (string, error) {
	typ, assoc := objectOf(a.Kind)
	if _, err := s.keyProperty(ctx, typ, true); err != nil {
		return "", err
	}
	props, err := s.activityProperties(ctx, a)
	if err != nil {
		return "", err
	}
	var ans struct {
		ID string `json:"id"`
	}
	if id == "" {
		body := map[string]any{"properties": props, "associations": []map[string]any{{
			"to":    map[string]string{"id": a.RecordID},
			"types": []map[string]any{{"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": assoc}},
		}}}
		if _, err := s.c.do(ctx, call{method: http.MethodPost, path: "/crm/v3/objects/" + typ, body: body}, &ans); err != nil {
			return "", fmt.Errorf("create %s on contact %s: %w", typ, a.RecordID, activityError(err))
		}
		if ans.ID == "" {
			return "", fmt.Errorf("create %s on contact %s: %w: answer holds no id", typ, a.RecordID, ErrOutcomeUnknown)
		}
		return ans.ID, nil
	}
	if _, err := s.c.do(ctx, call{method: http.MethodPatch, path: "/crm/v3/objects/" + typ + "/" + url.PathEscape(id),
		body: map[string]any{"properties": props}, idempotent: true}, &ans); err != nil {
		return "", fmt.Errorf("update %s %s: %w", typ, id, activityError(err))
	}
	return id, nil
}

// activityError classifies an error: a 404 is connector.ErrNotFound, a
// refusal a *connector.RefusedError.
func activityError(err error) error {
	var e *Error
	if errors.As(err, &e) && e.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %w", connector.ErrNotFound, err)
	}
	return refusal(err)
}

// keyProperty reports whether ActivityKeyProperty exists on typ; with
// create it makes it (and its group) when it does not. 409 answers mean
// another process made it first.
func (s *Source) keyProperty(ctx context.Context, typ string, create bool) (bool, error) {
	st := s.acts()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.hasKey[typ] {
		return true, nil
	}
	_, err := s.c.do(ctx, call{method: http.MethodGet, path: "/crm/v3/properties/" + typ + "/" + ActivityKeyProperty, idempotent: true}, nil)
	var e *Error
	switch {
	case err == nil:
		st.hasKey[typ] = true
		return true, nil
	case !errors.As(err, &e) || e.StatusCode != http.StatusNotFound:
		return false, fmt.Errorf("read property %s of %s: %w", ActivityKeyProperty, typ, err)
	case !create:
		return false, nil
	}
	group := map[string]any{"name": activityGroup, "label": "syncd"}
	if _, err := s.c.do(ctx, call{method: http.MethodPost, path: "/crm/v3/properties/" + typ + "/groups", body: group}, nil); err != nil && !isConflict(err) {
		return false, fmt.Errorf("create property group %s of %s: %w", activityGroup, typ, refusal(err))
	}
	prop := map[string]any{"name": ActivityKeyProperty, "label": "syncd activity key", "type": "string", "fieldType": "text",
		"groupName": activityGroup, "description": "Set by syncd: which call or text of the phone workspace this is, so that it is logged once."}
	if _, err := s.c.do(ctx, call{method: http.MethodPost, path: "/crm/v3/properties/" + typ, body: prop}, nil); err != nil && !isConflict(err) {
		return false, fmt.Errorf("create property %s of %s: %w", ActivityKeyProperty, typ, refusal(err))
	}
	st.hasKey[typ] = true
	return true, nil
}

func isConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusConflict
}

// owner returns the id of the owner with email, "" when HubSpot has none
// (GET /crm/v3/owners?email=), remembered for the process's life.
func (s *Source) owner(ctx context.Context, email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return "", nil
	}
	st := s.acts()
	st.mu.Lock()
	defer st.mu.Unlock()
	if id, ok := st.owners[email]; ok {
		return id, nil
	}
	var ans struct {
		Results []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"results"`
	}
	if _, err := s.c.do(ctx, call{method: http.MethodGet, path: "/crm/v3/owners", query: url.Values{"email": {email}}, idempotent: true}, &ans); err != nil {
		return "", fmt.Errorf("find owner: %w", err)
	}
	id := ""
	for _, o := range ans.Results {
		if strings.EqualFold(o.Email, email) {
			id = o.ID
			break
		}
	}
	st.owners[email] = id
	return id, nil
}

// callStatuses maps the workspace's call statuses to hs_call_status.
var callStatuses = map[string]string{
	"completed": "COMPLETED", "answered": "COMPLETED", "forwarded": "COMPLETED",
	"busy": "BUSY", "failed": "FAILED", "no-answer": "NO_ANSWER", "missed": "NO_ANSWER",
	"canceled": "CANCELED", "abandoned": "CANCELED", "ringing": "RINGING",
	"in-progress": "IN_PROGRESS", "queued": "QUEUED", "initiated": "CONNECTING",
}

// activityProperties are the engagement's properties: every one syncd
// sets, each time (an absent summary is an empty body), so that a write
// replaces the whole value.
func (s *Source) activityProperties(ctx context.Context, a connector.Activity) (map[string]string, error) {
	ownerID, err := s.owner(ctx, a.OwnerEmail)
	if err != nil {
		return nil, err
	}
	p := map[string]string{
		ActivityKeyProperty: a.Key,
		"hs_timestamp":      a.At.UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	if ownerID != "" {
		p["hubspot_owner_id"] = ownerID
	}
	if a.Kind == connector.ActivityMessage {
		p["hs_communication_channel_type"] = "SMS"
		p["hs_communication_logged_from"] = "CRM"
		p["hs_communication_body"] = activitytext.HTML(a)
		return p, nil
	}
	dir := "INBOUND"
	if a.Direction == connector.DirectionOutgoing {
		dir = "OUTBOUND"
	}
	status := callStatuses[a.Status]
	if status == "" {
		status = "COMPLETED"
	}
	p["hs_call_direction"] = dir
	p["hs_call_title"] = activitytext.Subject(a)
	p["hs_call_status"] = status
	p["hs_call_duration"] = strconv.FormatInt(a.Duration.Milliseconds(), 10)
	p["hs_call_from_number"] = a.From
	p["hs_call_to_number"] = a.To
	p["hs_call_recording_url"] = a.RecordingURL
	p["hs_call_body"] = activitytext.HTML(a) // summary, next steps, recording, transcript: what a holds
	return p, nil
}
