package workspace

import "time"

// Call and message events, as the spec's Events table and the service's
// published OpenAPI document name them (shared/notes/workspace-api-facts.md).
const (
	EventCallCompleted           = "call.completed"
	EventCallRecordingCompleted  = "call.recording.completed"
	EventCallSummaryCompleted    = "call.summary.completed"
	EventCallTranscriptCompleted = "call.transcript.completed"
	EventMessageReceived         = "message.received"
	EventMessageDelivered        = "message.delivered"
)

// Routes of the call and message operations (the published document's).
const (
	RouteListCalls      = "GET /v1/calls"
	RouteListMessages   = "GET /v1/messages"
	RouteCallSummary    = "GET /v1/call-summaries/{id}"
	RouteCallTranscript = "GET /v1/call-transcripts/{id}"
	RouteCallRecordings = "GET /v1/call-recordings/{id}"
)

// Object discriminators of the resources call and message events carry.
const (
	CallObject           = "call"
	MessageObject        = "message"
	CallSummaryObject    = "callSummary"
	CallTranscriptObject = "callTranscript"
)

// Directions of calls and messages.
const (
	Incoming = "incoming"
	Outgoing = "outgoing"
)

// Call is a call of a workspace number, as the published document has
// it. Participants are the other parties' numbers (E.164): the
// workspace's own number is not among them.
type Call struct {
	ID            string     `json:"id"`
	Object        string     `json:"object,omitempty"`
	PhoneNumberID string     `json:"phoneNumberId"`
	UserID        string     `json:"userId,omitempty"`
	Participants  []string   `json:"participants"`
	Direction     string     `json:"direction"`
	Status        string     `json:"status"`
	Duration      int        `json:"duration"` // seconds
	CreatedAt     time.Time  `json:"createdAt"`
	AnsweredAt    *time.Time `json:"answeredAt"`
	CompletedAt   *time.Time `json:"completedAt"`
	UpdatedAt     *time.Time `json:"updatedAt,omitempty"`
	// Media is on the call a call.recording.completed event carries: the
	// recording's location, as the service's webhook guide shows it.
	Media []CallMedia `json:"media,omitempty"`
}

// CallMedia is a recording carried on a call.
type CallMedia struct {
	URL      string `json:"url"`
	Type     string `json:"type,omitempty"`
	Duration int    `json:"duration,omitempty"`
}

// Message is a text of a workspace number.
type Message struct {
	ID            string    `json:"id"`
	Object        string    `json:"object,omitempty"`
	From          string    `json:"from"`
	To            []string  `json:"to"`
	Text          string    `json:"text"`
	PhoneNumberID string    `json:"phoneNumberId"`
	Direction     string    `json:"direction"`
	UserID        string    `json:"userId,omitempty"`
	Status        string    `json:"status"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// CallSummary is GET /v1/call-summaries/{callId} and the resource of
// call.summary.completed.
type CallSummary struct {
	Object    string   `json:"object,omitempty"`
	CallID    string   `json:"callId"`
	Status    string   `json:"status"`
	Summary   []string `json:"summary"`
	NextSteps []string `json:"nextSteps"`
}

// DialogueLine is one line of a transcript: its text, who spoke (their
// number), and when, in seconds from the call's start.
type DialogueLine struct {
	Content    string  `json:"content"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Identifier string  `json:"identifier"`
	UserID     string  `json:"userId,omitempty"`
}

// CallTranscript is GET /v1/call-transcripts/{id} and the resource of
// call.transcript.completed.
type CallTranscript struct {
	Object    string         `json:"object,omitempty"`
	CallID    string         `json:"callId"`
	CreatedAt time.Time      `json:"createdAt"`
	Duration  float64        `json:"duration"`
	Status    string         `json:"status"`
	Dialogue  []DialogueLine `json:"dialogue"`
}

// CallRecording is one item of GET /v1/call-recordings/{callId}.
type CallRecording struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	StartTime time.Time `json:"startTime"`
	Duration  float64   `json:"duration"`
	Status    string    `json:"status"`
	Type      string    `json:"type"`
}

// ActivityPageParams are the query of GET /v1/calls and GET /v1/messages:
// one workspace number and exactly one participant, as the published
// document requires.
type ActivityPageParams struct {
	PhoneNumberID string
	Participant   string
	CreatedAfter  time.Time
	MaxResults    int // 1..100
	PageToken     string
}

// CallPage and MessagePage are pages of the listings.
type CallPage struct {
	Data          []Call  `json:"data"`
	TotalItems    int     `json:"totalItems"`
	NextPageToken *string `json:"nextPageToken"`
}

// MessagePage is a page of GET /v1/messages.
type MessagePage struct {
	Data          []Message `json:"data"`
	TotalItems    int       `json:"totalItems"`
	NextPageToken *string   `json:"nextPageToken"`
}

// MaxActivityPageSize is the largest maxResults of the call and message
// listings.
const MaxActivityPageSize = 100

// ActivityEvents are the event types of calls and messages syncd can log.
var ActivityEvents = []string{EventCallCompleted, EventCallRecordingCompleted, EventCallSummaryCompleted,
	EventCallTranscriptCompleted, EventMessageReceived, EventMessageDelivered}

// RouteGetUser reads one workspace user (the published document's GET
// /v1/users/{userId}).
const RouteGetUser = "GET /v1/users/{id}"

// User is a workspace user, as GET /v1/users/{userId} answers it (the
// fields syncd reads).
type User struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	Role      string `json:"role,omitempty"`
}
