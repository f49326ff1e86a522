package pipedrive

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/activitytext"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Activities: each call and each text is an activity (API v2) on the
// person, its primary participant (v2 makes person_id read-only and sets
// it from the primary participant), marked done, with due_date and
// due_time (UTC) when it happened, the duration of a call as HH:MM (whole
// minutes, rounded up), the owner the active user with the workspace
// user's e-mail, and the note (HTML) the text or the call's summary, next
// steps, recording link and transcript. A call is of type call, one of
// Pipedrive's default types; texts have no default type, so they are of
// the company's type named "Text message" (or "SMS"), which the connector
// adds (icon bubble) when the company has none; when Pipedrive refuses to
// add it (the token's user is no admin), texts are of type task, and the
// connector says so once.
//
// Pipedrive's activities have no external id and no custom fields a
// filter can find, so syncd's key is written in the note's last
// paragraph ("syncd: call:…"), and FindActivity reads the person's
// activities (person_id filter), newest added first, up to findPages
// pages, for the note holding it: an activity whose answer was lost was
// added moments before. See FACTS.md, "Activities".

const (
	typeCall         = "call"
	typeTask         = "task"
	textTypeName     = "Text message"
	textTypeIcon     = "bubble"
	findPageSize     = 100
	findPages        = 5
	activityOwnerTTL = time.Hour
)

var _ connector.ActivityWriter = (*Source)(nil)

// activityState is what the connector remembers between activities.
type activityState struct {
	mu       sync.Mutex
	textType string // key_string of the type of texts, once known
	owners   map[string]ownerSeen
}

type ownerSeen struct {
	id int64
	at time.Time
}

// ActivityKinds returns calls and messages.
func (s *Source) ActivityKinds() []connector.ActivityKind {
	return []connector.ActivityKind{connector.ActivityCall, connector.ActivityMessage}
}

// keyMarker is the note's last paragraph, which holds syncd's key.
func keyMarker(key string) string { return "<p>syncd: " + html.EscapeString(key) + "</p>" }

type activityItem struct {
	ID   int64  `json:"id"`
	Note string `json:"note"`
	Type string `json:"type"`
}

// FindActivity looks for the activity whose note holds key among the
// person's activities, newest added first.
func (s *Source) FindActivity(ctx context.Context, kind connector.ActivityKind, key, recordID string) (string, error) {
	person, err := strconv.ParseInt(recordID, 10, 64)
	if err != nil || person < 1 {
		return "", fmt.Errorf("find %s %s on person %q: %w", kind, key, recordID, connector.ErrNotFound)
	}
	marker := keyMarker(key)
	cursor := ""
	for range findPages {
		q := url.Values{"person_id": {recordID}, "sort_by": {"add_time"}, "sort_direction": {"desc"}, "limit": {strconv.Itoa(findPageSize)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var ans struct {
			Data           []activityItem `json:"data"`
			AdditionalData struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"additional_data"`
		}
		err := s.c.do(ctx, call{method: http.MethodGet, path: "/api/v2/activities", query: q, route: "GET /api/v2/activities", idempotent: true}, &ans)
		if err != nil {
			return "", fmt.Errorf("find %s %s: %w", kind, key, err)
		}
		for _, a := range ans.Data {
			if strings.Contains(a.Note, marker) {
				return strconv.FormatInt(a.ID, 10), nil
			}
		}
		if ans.AdditionalData.NextCursor == nil || *ans.AdditionalData.NextCursor == "" {
			return "", nil
		}
		cursor = *ans.AdditionalData.NextCursor
	}
	return "", nil
}

// WriteActivity adds the activity (id "") or replaces its values.
func (s *Source) WriteActivity(ctx context.Context, id string, a connector.Activity) (string, error) {
	person, err := strconv.ParseInt(a.RecordID, 10, 64)
	if err != nil || person < 1 {
		return "", fmt.Errorf("write %s %s on person %q: %w", a.Kind, a.Key, a.RecordID, connector.ErrNotFound)
	}
	typ := typeCall
	if a.Kind == connector.ActivityMessage {
		if typ, err = s.textType(ctx); err != nil {
			return "", err
		}
	}
	owner, err := s.activityOwner(ctx, a.OwnerEmail)
	if err != nil {
		return "", err
	}
	at := a.At.UTC()
	body := map[string]any{
		"subject":      activitytext.Subject(a),
		"type":         typ,
		"participants": []map[string]any{{"person_id": person, "primary": true}},
		"due_date":     at.Format(time.DateOnly),
		"due_time":     at.Format("15:04"),
		"done":         true,
		"note":         activitytext.HTML(a) + keyMarker(a.Key),
	}
	if a.Kind == connector.ActivityCall {
		body["duration"] = hhmm(a.Duration)
	}
	if owner != 0 {
		body["owner_id"] = owner
	}
	cl := call{method: http.MethodPost, path: "/api/v2/activities", body: body, route: "POST /api/v2/activities"}
	what := "add activity"
	if id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err != nil || n < 1 {
			return "", fmt.Errorf("update activity %q: %w", id, connector.ErrNotFound)
		}
		cl = call{method: http.MethodPatch, path: "/api/v2/activities/" + id, body: body, route: "PATCH /api/v2/activities/{id}", idempotent: true}
		what = "update activity " + id
	}
	var ans struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	err = s.c.do(ctx, cl, &ans)
	if err == nil && ans.Data.ID == 0 {
		err = fmt.Errorf("%w: the answer names no activity id", ErrOutcomeUnknown)
	}
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.Message, pe.Info = activitytext.Redact(pe.Message, a), activitytext.Redact(pe.Info, a)
		}
		return "", fmt.Errorf("%s: %w", what, refusal(err))
	}
	return strconv.FormatInt(ans.Data.ID, 10), nil
}

// hhmm is a call's duration as Pipedrive's HH:MM, in whole minutes
// rounded up (a 10-second call shows as 00:01, not as none).
func hhmm(d time.Duration) string {
	m := int64((d + time.Minute - 1) / time.Minute)
	return fmt.Sprintf("%02d:%02d", m/60, m%60)
}

// textType returns the key_string of the activity type of texts: the
// company's active type named "Text message" or "SMS", added when there
// is none; task when Pipedrive refuses to add it.
func (s *Source) textType(ctx context.Context) (string, error) {
	s.acts.mu.Lock()
	defer s.acts.mu.Unlock()
	if s.acts.textType != "" {
		return s.acts.textType, nil
	}
	var types struct {
		Data []struct {
			Name      string `json:"name"`
			KeyString string `json:"key_string"`
			Active    bool   `json:"active_flag"`
		} `json:"data"`
	}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/v1/activityTypes", route: "GET /v1/activityTypes", idempotent: true}, &types); err != nil {
		return "", fmt.Errorf("read activity types: %w", err)
	}
	for _, t := range types.Data {
		if n := strings.ToLower(strings.TrimSpace(t.Name)); t.Active && (n == strings.ToLower(textTypeName) || n == "sms") {
			s.acts.textType = t.KeyString
			return t.KeyString, nil
		}
	}
	var added struct {
		Data struct {
			KeyString string `json:"key_string"`
		} `json:"data"`
	}
	err := s.c.do(ctx, call{method: http.MethodPost, path: "/v1/activityTypes", body: map[string]any{"name": textTypeName, "icon_key": textTypeIcon},
		route: "POST /v1/activityTypes"}, &added)
	var pe *Error
	switch {
	case errors.As(err, &pe) && pe.refused():
		s.log.WithField(logfield.Error, pe.Error()).Warn("pipedrive refused to add the activity type \"Text message\"; texts are logged as tasks (an admin can add the type)")
		s.acts.textType = typeTask
	case err != nil:
		return "", fmt.Errorf("add the activity type of texts: %w", err)
	case added.Data.KeyString == "":
		return "", fmt.Errorf("add the activity type of texts: the answer names no key_string")
	default:
		s.acts.textType = added.Data.KeyString
	}
	return s.acts.textType, nil
}

// activityOwner returns the id of the active user with the e-mail, 0
// when there is none (Pipedrive then makes the token's user the owner).
func (s *Source) activityOwner(ctx context.Context, email string) (int64, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return 0, nil
	}
	s.acts.mu.Lock()
	seen, ok := s.acts.owners[email]
	s.acts.mu.Unlock()
	if ok && time.Since(seen.at) < activityOwnerTTL {
		return seen.id, nil
	}
	var ans struct {
		Data []struct {
			ID     int64  `json:"id"`
			Email  string `json:"email"`
			Active bool   `json:"active_flag"`
		} `json:"data"`
	}
	q := url.Values{"term": {email}, "search_by_email": {"1"}}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/v1/users/find", query: q, route: "GET /v1/users/find", idempotent: true}, &ans); err != nil {
		return 0, fmt.Errorf("find the user of an activity's owner: %w", err)
	}
	var id int64
	for _, u := range ans.Data {
		if u.Active && strings.EqualFold(u.Email, email) {
			id = u.ID
			break
		}
	}
	s.acts.mu.Lock()
	if s.acts.owners == nil {
		s.acts.owners = map[string]ownerSeen{}
	}
	s.acts.owners[email] = ownerSeen{id: id, at: time.Now()}
	s.acts.mu.Unlock()
	return id, nil
}
