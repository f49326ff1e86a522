package emulator

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// Calls and texts: the back door makes them happen (POST
// /_emulator/app/calls, .../{id}/summary|transcript|recording, POST
// /_emulator/app/messages), each delivering its event as the service
// does, and the API lists and reads them as the published document has
// it (GET /v1/calls and /v1/messages need phoneNumberId and exactly one
// participant; GET /v1/call-summaries, /v1/call-transcripts and
// /v1/call-recordings by call id; GET /v1/phone-numbers).

// The emulated workspace's one phone number.
const (
	PhoneNumberID = "PNemulator01"
	PhoneNumber   = "+15550100100"
)

// areaCalls is the area of the call operations: 09, as the spec's call
// recordings row shows; messages and phone numbers share it (the
// emulator's choice).
const areaCalls area = "09"

// activityState holds the calls and texts; Emulator.mu guards it.
type activityState struct {
	calls       map[string]*callRec
	callOrder   []*callRec
	messages    []workspace.Message
	recordingID int
}

type callRec struct {
	c          workspace.Call
	summary    *workspace.CallSummary
	transcript *workspace.CallTranscript
	recordings []workspace.CallRecording
}

func (s *state) activity() *activityState {
	if s.act == nil {
		s.act = &activityState{calls: map[string]*callRec{}}
	}
	return s.act
}

// activityRoutes adds the back door's call and message routes.
func (e *Emulator) activityRoutes(mux *http.ServeMux, serve func(h func(r *http.Request) answer) http.HandlerFunc) {
	mux.Handle("POST /_emulator/app/calls", serve(e.appCall))
	mux.Handle("POST /_emulator/app/calls/{id}/summary", serve(e.appSummary))
	mux.Handle("POST /_emulator/app/calls/{id}/transcript", serve(e.appTranscript))
	mux.Handle("POST /_emulator/app/calls/{id}/recording", serve(e.appRecording))
	mux.Handle("POST /_emulator/app/messages", serve(e.appMessage))
}

// activityOps are the API's call and message operations.
func (e *Emulator) activityOps() []op {
	return []op{
		{route: workspace.RouteListCalls, area: areaCalls, handle: e.listCalls},
		{route: workspace.RouteListMessages, area: areaCalls, handle: e.listMessages},
		{route: workspace.RouteCallSummary, area: areaCalls, handle: e.callPart(callSummary)},
		{route: workspace.RouteCallTranscript, area: areaCalls, handle: e.callPart(callTranscript)},
		{route: workspace.RouteCallRecordings, area: areaCalls, handle: e.callPart(callRecordings)},
		{route: "GET /v1/phone-numbers", area: areaCalls, handle: e.phoneNumbers},
		{route: workspace.RouteGetUser, area: areaUsers, handle: e.getUser},
	}
}

// areaUsers is the area of the user operations (the emulator's choice).
const areaUsers area = "10"

// getUser serves GET /v1/users/{userId} from Options.Users.
func (e *Emulator) getUser(r *http.Request) answer {
	id := r.PathValue("id")
	for _, u := range e.opts.Users {
		if u.ID == id {
			return ok(http.StatusOK, dataOf(u))
		}
	}
	return fail(e.newError(areaUsers, http.StatusNotFound, "User "+id+" was not found"))
}

var (
	e164Node   = &node{typ: "string"}
	callSchema = object(map[string]*node{
		"participants": array(e164Node, 1, 0), "direction": enum(workspace.Incoming, workspace.Outgoing),
		"status": {typ: "string"}, "duration": {typ: "integer"}, "userId": {typ: "string"},
	}, "participants", "direction")
	summarySchema    = object(map[string]*node{"summary": array(&node{typ: "string"}, 0, 0), "nextSteps": array(&node{typ: "string"}, 0, 0)})
	transcriptSchema = object(map[string]*node{"dialogue": array(object(map[string]*node{
		"content": {typ: "string"}, "identifier": {typ: "string"}, "start": {typ: "number"}, "end": {typ: "number"}, "userId": {typ: "string"},
	}, "content", "identifier"), 0, 0)}, "dialogue")
	recordingSchema = object(map[string]*node{"url": {typ: "string"}, "duration": {typ: "number"}})
	messageSchema   = object(map[string]*node{
		"from": {typ: "string"}, "to": array(e164Node, 1, 0), "text": {typ: "string"},
		"direction": enum(workspace.Incoming, workspace.Outgoing), "userId": {typ: "string"},
	}, "from", "to", "text", "direction")
)

// appCall serves POST /_emulator/app/calls: a call of the workspace's
// number ends, is stored for the listing and delivers call.completed.
func (e *Emulator) appCall(r *http.Request) answer {
	var in struct {
		Participants []string `json:"participants"`
		Direction    string   `json:"direction"`
		Status       string   `json:"status"`
		Duration     int      `json:"duration"`
		UserID       string   `json:"userId"`
	}
	if a, bad := e.readActivity(r, callSchema, &in); bad {
		return a
	}
	if in.Status == "" {
		in.Status = "completed"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	now := e.now()
	started := now.Add(-time.Duration(in.Duration) * time.Second)
	c := workspace.Call{ID: s.hexID("AC", 16), Object: workspace.CallObject, PhoneNumberID: PhoneNumberID, UserID: in.UserID,
		Participants: slices.Clone(in.Participants), Direction: in.Direction, Status: in.Status, Duration: in.Duration,
		CreatedAt: started, CompletedAt: &now, UpdatedAt: &now}
	if in.Status == "completed" {
		c.AnsweredAt = &started
	}
	rec := &callRec{c: c}
	act := s.activity()
	act.calls[c.ID] = rec
	act.callOrder = append(act.callOrder, rec)
	e.emitResourceLocked(workspace.EventCallCompleted, PhoneNumberID, c)
	return ok(http.StatusCreated, dataOf(map[string]string{"id": c.ID}))
}

// appSummary serves POST /_emulator/app/calls/{id}/summary.
func (e *Emulator) appSummary(r *http.Request) answer {
	var in struct {
		Summary   []string `json:"summary"`
		NextSteps []string `json:"nextSteps"`
	}
	if a, bad := e.readActivity(r, summarySchema, &in); bad {
		return a
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, aerr := e.callOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	rec.summary = &workspace.CallSummary{Object: workspace.CallSummaryObject, CallID: rec.c.ID, Status: "completed",
		Summary: nonNil(in.Summary), NextSteps: nonNil(in.NextSteps)}
	e.emitResourceLocked(workspace.EventCallSummaryCompleted, rec.c.PhoneNumberID, *rec.summary)
	return ok(http.StatusCreated, dataOf(map[string]string{"id": rec.c.ID}))
}

// appTranscript serves POST /_emulator/app/calls/{id}/transcript.
func (e *Emulator) appTranscript(r *http.Request) answer {
	var in struct {
		Dialogue []workspace.DialogueLine `json:"dialogue"`
	}
	if a, bad := e.readActivity(r, transcriptSchema, &in); bad {
		return a
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, aerr := e.callOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	rec.transcript = &workspace.CallTranscript{Object: workspace.CallTranscriptObject, CallID: rec.c.ID, CreatedAt: e.now(),
		Duration: float64(rec.c.Duration), Status: "completed", Dialogue: nonNil(in.Dialogue)}
	e.emitResourceLocked(workspace.EventCallTranscriptCompleted, rec.c.PhoneNumberID, *rec.transcript)
	return ok(http.StatusCreated, dataOf(map[string]string{"id": rec.c.ID}))
}

// appRecording serves POST /_emulator/app/calls/{id}/recording: the call
// gets a recording, and call.recording.completed carries the call with
// its media, as the service's webhook guide shows.
func (e *Emulator) appRecording(r *http.Request) answer {
	var in struct {
		URL      string  `json:"url"`
		Duration float64 `json:"duration"`
	}
	if a, bad := e.readActivity(r, recordingSchema, &in); bad {
		return a
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, aerr := e.callOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	act := e.state.activity()
	act.recordingID++
	id := "RC" + strconv.Itoa(act.recordingID)
	if in.URL == "" {
		in.URL = "https://files.workspace.invalid/recordings/" + rec.c.ID + "/" + id + ".mp3"
	}
	if in.Duration == 0 {
		in.Duration = float64(rec.c.Duration)
	}
	rec.recordings = append(rec.recordings, workspace.CallRecording{ID: id, URL: in.URL, StartTime: rec.c.CreatedAt,
		Duration: in.Duration, Status: "completed", Type: "audio/mpeg"})
	c := rec.c
	for _, rc := range rec.recordings {
		c.Media = append(c.Media, workspace.CallMedia{URL: rc.URL, Type: rc.Type, Duration: int(rc.Duration)})
	}
	e.emitResourceLocked(workspace.EventCallRecordingCompleted, c.PhoneNumberID, c)
	return ok(http.StatusCreated, dataOf(map[string]string{"id": id}))
}

// appMessage serves POST /_emulator/app/messages: a text is received
// (incoming: message.received) or delivered (outgoing: message.delivered).
func (e *Emulator) appMessage(r *http.Request) answer {
	var in struct {
		From      string   `json:"from"`
		To        []string `json:"to"`
		Text      string   `json:"text"`
		Direction string   `json:"direction"`
		UserID    string   `json:"userId"`
	}
	if a, bad := e.readActivity(r, messageSchema, &in); bad {
		return a
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	now := e.now()
	m := workspace.Message{ID: s.hexID("AM", 16), Object: workspace.MessageObject, From: in.From, To: slices.Clone(in.To), Text: in.Text,
		PhoneNumberID: PhoneNumberID, Direction: in.Direction, UserID: in.UserID, CreatedAt: now, UpdatedAt: now}
	event := workspace.EventMessageReceived
	m.Status = "received"
	if in.Direction == workspace.Outgoing {
		event, m.Status = workspace.EventMessageDelivered, "delivered"
	}
	act := s.activity()
	act.messages = append(act.messages, m)
	e.emitResourceLocked(event, PhoneNumberID, m)
	return ok(http.StatusCreated, dataOf(map[string]string{"id": m.ID}))
}

func (e *Emulator) readActivity(r *http.Request, sch *node, dst any) (answer, bool) {
	errs, aerr := e.readBody(r, areaCalls, sch, dst)
	if aerr != nil {
		return fail(aerr), true
	}
	if len(errs) > 0 {
		return fail(e.validationError(areaCalls, errs)), true
	}
	return answer{}, false
}

func (e *Emulator) callOf(r *http.Request) (*callRec, *apiError) {
	id := r.PathValue("id")
	rec := e.state.activity().calls[id]
	if rec == nil {
		return nil, e.newError(areaCalls, http.StatusNotFound, "Call "+id+" was not found")
	}
	return rec, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// emitResourceLocked delivers event about resource to every enabled
// webhook subscribed to it whose phone number filter lets phoneNumberID
// through. Emulator.mu is held.
func (e *Emulator) emitResourceLocked(event, phoneNumberID string, resource any) {
	s := e.state
	var evID string
	var raw []byte
	for _, id := range s.webhookOrder {
		wh := s.webhooks[id]
		if !wh.subscribes(event) {
			continue
		}
		if f := wh.wh.ResourceIDs; len(f) > 0 && !slices.Contains(f, phoneNumberID) {
			continue
		}
		if evID == "" {
			evID = s.hexID("EV", 16)
			raw, _ = json.Marshal(resource)
		}
		e.queueLocked(wh, evID, event, raw)
	}
}

// maybeDuplicateLocked queues dl's event a second time with the share of
// Options.WebhookDuplicates, as at-least-once services deliver some
// events twice (the same webhook-id, a delivery of its own).
func (e *Emulator) maybeDuplicateLocked(wh *webhookRec, dl *deliveryRec) {
	p := e.opts.WebhookDuplicates
	if p <= 0 || e.state.ids.Float64() >= p {
		return
	}
	now := e.now()
	dup := &deliveryRec{st: dl.st, body: dl.body, d: workspace.Delivery{
		ID: e.state.hexID("WD", 8), WebhookID: wh.wh.ID, EventID: dl.d.EventID, Type: dl.d.Type,
		Status: DeliveryPending, CreatedAt: now, UpdatedAt: now,
	}}
	wh.deliveries = append(wh.deliveries, dup)
	wh.deliveryByID[dup.d.ID] = dup
	e.deliver.enqueue(wh.wh.ID, dup, dup.round)
}

// activityQuery is the listing's query: phoneNumberId and exactly one
// participant are required; createdAfter/createdBefore bound it;
// maxResults 1-100 (default 10); pageToken is the offset.
type activityQuery struct {
	phoneNumberID, participant string
	after, before              time.Time
	max, offset                int
}

func (e *Emulator) readListQuery(r *http.Request) (activityQuery, *apiError) {
	q := r.URL.Query()
	lq := activityQuery{phoneNumberID: q.Get("phoneNumberId"), max: 10}
	var errs []workspace.FieldError
	if lq.phoneNumberID == "" {
		errs = append(errs, workspace.FieldError{Path: "/phoneNumberId", Message: "Expected required property", Schema: map[string]any{"type": "string"}})
	}
	parts := append(q["participants"], q["participants[]"]...)
	if len(parts) != 1 {
		errs = append(errs, workspace.FieldError{Path: "/participants", Message: "Expected exactly one participant", Value: parts,
			Schema: map[string]any{"type": "array", "minItems": 1, "maxItems": 1}})
	} else {
		lq.participant = parts[0]
	}
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"createdAfter", &lq.after}, {"createdBefore", &lq.before}} {
		if v := q.Get(b.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				errs = append(errs, workspace.FieldError{Path: "/" + b.name, Message: "Expected date-time", Value: v, Schema: map[string]any{"type": "string", "format": "date-time"}})
			}
			*b.t = t
		}
	}
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > workspace.MaxActivityPageSize {
			errs = append(errs, workspace.FieldError{Path: "/maxResults", Message: "Expected integer between 1 and 100", Value: v,
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 100}})
		}
		lq.max = n
	}
	if v := q.Get("pageToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, workspace.FieldError{Path: "/pageToken", Message: "Expected a page token of this listing", Value: v, Schema: map[string]any{"type": "string"}})
		}
		lq.offset = n
	}
	if len(errs) > 0 {
		return lq, e.validationError(areaCalls, errs)
	}
	return lq, nil
}

func (lq activityQuery) within(t time.Time) bool {
	return (lq.after.IsZero() || t.After(lq.after)) && (lq.before.IsZero() || t.Before(lq.before))
}

// page cuts a page out of all, with the next token.
func page[T any](all []T, lq activityQuery) map[string]any {
	end := min(lq.offset+lq.max, len(all))
	start := min(lq.offset, end)
	var next any
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return map[string]any{"data": nonNil(all[start:end]), "totalItems": len(all), "nextPageToken": next}
}

// listCalls serves GET /v1/calls: the 1:1 calls of the number with the
// participant, oldest first (the order is the emulator's choice).
func (e *Emulator) listCalls(r *http.Request) answer {
	lq, aerr := e.readListQuery(r)
	if aerr != nil {
		return fail(aerr)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []workspace.Call
	for _, rec := range e.state.activity().callOrder {
		c := rec.c
		if c.PhoneNumberID == lq.phoneNumberID && len(c.Participants) == 1 && c.Participants[0] == lq.participant && lq.within(c.CreatedAt) {
			out = append(out, c)
		}
	}
	return ok(http.StatusOK, page(out, lq))
}

// listMessages serves GET /v1/messages: the texts of the number with the
// participant, oldest first.
func (e *Emulator) listMessages(r *http.Request) answer {
	lq, aerr := e.readListQuery(r)
	if aerr != nil {
		return fail(aerr)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []workspace.Message
	for _, m := range e.state.activity().messages {
		with := m.From == lq.participant || (len(m.To) == 1 && m.To[0] == lq.participant)
		if m.PhoneNumberID == lq.phoneNumberID && with && lq.within(m.CreatedAt) {
			out = append(out, m)
		}
	}
	return ok(http.StatusOK, page(out, lq))
}

// callPart serves a read of one part of a call by its id (404 for an
// unknown call): part returns what the answer's data holds.
func (e *Emulator) callPart(part func(*callRec) any) func(r *http.Request) answer {
	return func(r *http.Request) answer {
		e.mu.Lock()
		defer e.mu.Unlock()
		rec, aerr := e.callOf(r)
		if aerr != nil {
			return fail(aerr)
		}
		return ok(http.StatusOK, dataOf(part(rec)))
	}
}

// callSummary serves GET /v1/call-summaries/{callId}: status absent
// until the call has one.
func callSummary(rec *callRec) any {
	if rec.summary == nil {
		return workspace.CallSummary{CallID: rec.c.ID, Status: "absent"}
	}
	return *rec.summary
}

// callTranscript serves GET /v1/call-transcripts/{callId}.
func callTranscript(rec *callRec) any {
	if rec.transcript == nil {
		return workspace.CallTranscript{CallID: rec.c.ID, Status: "absent"}
	}
	return *rec.transcript
}

// callRecordings serves GET /v1/call-recordings/{callId}.
func callRecordings(rec *callRec) any { return nonNil(rec.recordings) }

// phoneNumbers serves GET /v1/phone-numbers: the workspace's one number.
func (e *Emulator) phoneNumbers(*http.Request) answer {
	return ok(http.StatusOK, dataOf([]map[string]any{{
		"id": PhoneNumberID, "number": PhoneNumber, "name": "Main line",
		"formattedNumber": strings.TrimPrefix(PhoneNumber, "+"), "createdAt": e.created, "updatedAt": e.created,
	}}))
}
