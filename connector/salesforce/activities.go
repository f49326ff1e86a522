package salesforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/activitytext"
)

// Activities: each call and each text is a Task on the Contact or Lead
// (WhoId), written through sObject Collections like the records (one
// record a call). A call is TaskSubtype Call with CallType Inbound or
// Outbound, CallDurationInSeconds and CallDisposition (the workspace's
// status); a text is TaskSubtype Task (Salesforce's subtype for tasks
// other than calls, e-mails, LinkedIn and cadence steps; there is none
// for texts). Both are Status Completed, ActivityDate the day (UTC) of the
// call or text, Subject "Call from +1...", and Description the text or
// the summary, next steps, recording link and transcript.
//
// syncd's key goes in CallObject ("Call Object Identifier", a filterable
// text of 255 characters that CTI adapters set to their call's id), which
// every org has without setup, so FindActivity is one SOQL query on
// CallObject and WhoId. TaskSubtype is createable, not updateable: a
// replace leaves it out. See FACTS.md, "Activities".

// Limits of Task's text fields (Object Reference).
const (
	subjectMax     = 255
	descriptionMax = 32000
	taskObject     = "Task"
)

// ownerTTL is how long a user looked up by e-mail (or found missing) is
// remembered.
const ownerTTL = time.Hour

var _ connector.ActivityWriter = (*Source)(nil)

// owners caches the org's active users by e-mail.
type owners struct {
	mu sync.Mutex
	by map[string]ownerEntry
}

type ownerEntry struct {
	id string
	at time.Time
}

// ActivityKinds returns calls and messages: both are Tasks.
func (s *Source) ActivityKinds() []connector.ActivityKind {
	return []connector.ActivityKind{connector.ActivityCall, connector.ActivityMessage}
}

// FindActivity returns the Task with CallObject key on recordID, "" when
// there is none. query (not queryAll) leaves deleted Tasks out: a Task a
// person deleted is written again.
func (s *Source) FindActivity(ctx context.Context, kind connector.ActivityKind, key, recordID string) (string, error) {
	if !validID(recordID) {
		return "", fmt.Errorf("find %s %s on %s: %w", kind, key, recordID, connector.ErrNotFound)
	}
	q := "SELECT Id FROM Task WHERE CallObject = " + quote(key) + " AND WhoId = " + quote(recordID) + " ORDER BY CreatedDate, Id LIMIT 1"
	var ans queryAnswer
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/query", query: url.Values{"q": {q}}}, &ans); err != nil {
		return "", fmt.Errorf("find %s %s: %w", kind, key, err)
	}
	if len(ans.Records) == 0 {
		return "", nil
	}
	var r struct {
		ID string `json:"Id"`
	}
	if err := json.Unmarshal(ans.Records[0], &r); err != nil {
		return "", fmt.Errorf("find %s %s: decode task: %w", kind, key, err)
	}
	return r.ID, nil
}

// WriteActivity creates the Task (id "") or replaces its values.
func (s *Source) WriteActivity(ctx context.Context, id string, a connector.Activity) (string, error) {
	if id != "" && !validID(id) {
		return "", fmt.Errorf("update task %s: %w", id, connector.ErrNotFound)
	}
	owner, err := s.ownerOf(ctx, a.OwnerEmail)
	if err != nil {
		return "", err
	}
	rec := taskFields(a, owner, id == "")
	rec["attributes"] = map[string]string{"type": taskObject}
	method, what := http.MethodPost, "create task"
	if id != "" {
		rec["id"] = id
		method, what = http.MethodPatch, "update task "+id
	}
	body := map[string]any{"allOrNone": false, "records": []map[string]any{rec}}
	var res []saveResult
	err = s.c.do(ctx, call{method: method, path: collectionsPath, body: body}, &res)
	if err != nil {
		if refusal := callRefusal(err); refusal != nil {
			return "", fmt.Errorf("%s: %w", what, redactRefusal(refusal, a))
		}
		if method == http.MethodPost && !isRefusal(err) && !errors.Is(err, connector.ErrOutcomeUnknown) {
			err = fmt.Errorf("%w: %w", connector.ErrOutcomeUnknown, err)
		}
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if len(res) != 1 {
		return "", fmt.Errorf("%s: %w: salesforce answered %d results for 1 record", what, connector.ErrOutcomeUnknown, len(res))
	}
	if !res[0].Success {
		re := &RecordError{Op: connector.OpCreate, ID: id, Code: "UNKNOWN_EXCEPTION"}
		if id != "" {
			re.Op = connector.OpUpdate
		}
		if len(res[0].Errors) > 0 {
			e := res[0].Errors[0]
			re.Code, re.Message, re.Fields = e.StatusCode, activitytext.Redact(e.Message, a), e.Fields
		}
		return "", fmt.Errorf("%s: %w", what, re.result())
	}
	if id != "" {
		return id, nil
	}
	if res[0].ID == nil || *res[0].ID == "" {
		return "", fmt.Errorf("%s: %w: the answer names no task id", what, connector.ErrOutcomeUnknown)
	}
	return *res[0].ID, nil
}

// redactRefusal withholds a whole-call refusal's message when it quotes
// the activity's private text.
func redactRefusal(r *connector.RefusedError, a connector.Activity) error {
	var e *Error
	if errors.As(r.Err, &e) {
		e.Message = activitytext.Redact(e.Message, a)
	}
	r.Reason = activitytext.Redact(r.Reason, a)
	return r
}

// taskFields are the Task's values for a; create adds TaskSubtype, which
// Salesforce lets no update change.
func taskFields(a connector.Activity, owner string, create bool) map[string]any {
	desc := activitytext.Plain(a)
	f := map[string]any{
		"WhoId":        a.RecordID,
		"Subject":      activitytext.Cut(activitytext.Subject(a), subjectMax),
		"Status":       "Completed",
		"ActivityDate": a.At.UTC().Format(time.DateOnly),
		"CallObject":   a.Key,
		"Description":  nil,
	}
	if desc != "" {
		f["Description"] = activitytext.Cut(desc, descriptionMax)
	}
	if owner != "" {
		f["OwnerId"] = owner
	}
	if a.Kind == connector.ActivityCall {
		callType := "Outbound"
		if a.Direction == connector.DirectionIncoming {
			callType = "Inbound"
		}
		f["CallType"] = callType
		f["CallDurationInSeconds"] = json.Number(fmt.Sprint(int64(a.Duration / time.Second)))
		f["CallDisposition"] = nilIfEmpty(activitytext.Cut(a.Status, 255))
	}
	if create {
		f["TaskSubtype"] = "Task"
		if a.Kind == connector.ActivityCall {
			f["TaskSubtype"] = "Call"
		}
	}
	return f
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// ownerOf returns the id of the org's active user with the e-mail, ""
// when there is none (the Task then belongs to syncd's API user).
func (s *Source) ownerOf(ctx context.Context, email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if email == "" {
		return "", nil
	}
	s.owners.mu.Lock()
	e, ok := s.owners.by[email]
	s.owners.mu.Unlock()
	if ok && time.Since(e.at) < ownerTTL {
		return e.id, nil
	}
	q := "SELECT Id FROM User WHERE Email = " + quote(email) + " AND IsActive = true ORDER BY CreatedDate, Id LIMIT 1"
	var ans queryAnswer
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/query", query: url.Values{"q": {q}}}, &ans); err != nil {
		return "", fmt.Errorf("find the user of an activity's owner: %w", err)
	}
	id := ""
	if len(ans.Records) > 0 {
		var r struct {
			ID string `json:"Id"`
		}
		if err := json.Unmarshal(ans.Records[0], &r); err != nil {
			return "", fmt.Errorf("find the user of an activity's owner: decode user: %w", err)
		}
		id = r.ID
	}
	s.owners.mu.Lock()
	if s.owners.by == nil {
		s.owners.by = map[string]ownerEntry{}
	}
	s.owners.by[email] = ownerEntry{id: id, at: time.Now()}
	s.owners.mu.Unlock()
	return id, nil
}
