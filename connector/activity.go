package connector

import (
	"context"
	"time"
)

// ActivityKind is what an Activity records: a call or a text message.
type ActivityKind string

// Activity kinds.
const (
	ActivityCall    ActivityKind = "call"
	ActivityMessage ActivityKind = "message"
)

// Directions of an Activity, as the workspace names them.
const (
	DirectionIncoming = "incoming"
	DirectionOutgoing = "outgoing"
)

// Activity is one call or text of the workspace, to be shown on the
// timeline of one record of the connector's system (a HubSpot contact, a
// Salesforce Contact, a Pipedrive person, a row). The activity direction
// (package activity) builds it; a connector only writes it.
//
// An Activity carries its whole value every time: a later event of a
// call (its summary, transcript or recording) comes as the same Activity
// with more filled in, and is written over the earlier one.
type Activity struct {
	// Key identifies the activity among all that syncd writes: the kind,
	// the workspace's id of the call or message, and the record, e.g.
	// "call:AC123:101". The connector stores it on the activity (a
	// property, an external id, a column) so that FindActivity can find
	// an activity written before syncd recorded it. At most 200 bytes.
	Key string
	// Kind is a call or a message.
	Kind ActivityKind
	// RecordID is the record the activity belongs on (Record.ID).
	RecordID string
	// SourceID is the workspace's id of the call or message.
	SourceID string
	// Direction is DirectionIncoming or DirectionOutgoing.
	Direction string
	// At is when the call started or the message was sent.
	At time.Time
	// From and To are the numbers (E.164) the call or text went from and
	// to; one of them may be empty when the workspace's own number is
	// not known (a call names only its participants).
	From, To string
	// Status is the workspace's status of the call ("completed",
	// "no-answer", ...) or of the message ("delivered", "received").
	Status string
	// Duration is a call's length; zero for messages.
	Duration time.Duration
	// OwnerEmail is the e-mail of the workspace user who made or took
	// the call or sent the text, "" when unknown; the connector makes the
	// system's user with the same e-mail the owner, and sets none when
	// it has no such user.
	OwnerEmail string
	// Text is a message's body. Private: never logged, never in a dead
	// letter or an error.
	Text string
	// Summary and NextSteps are a call's summary, when the workspace made
	// one and the connector's activities log summaries.
	Summary, NextSteps []string
	// Transcript is a call's dialogue, only when the connector's
	// activities log transcripts. Private like Text.
	Transcript []TranscriptLine
	// RecordingURL is where a call's recording is, only when the
	// connector's activities log recordings.
	RecordingURL string
}

// TranscriptLine is one line of a call's transcript.
type TranscriptLine struct {
	// Speaker is the number (or the user) that spoke.
	Speaker string
	// Start and End are offsets into the call.
	Start, End time.Duration
	Content    string
}

// ActivityWriter is implemented by connectors that can log calls and
// texts on their records (capability CapActivities). The activity
// direction calls it from one goroutine per connector, through the
// connector's rate limiter, and keeps in its state which activity it
// wrote for each Key; the connector keeps nothing.
//
// Exactly once: syncd records an intent before it first writes an Key and
// the written activity's id after; only when an intent has no id (a crash
// or a lost answer between the two) does it call FindActivity before
// writing again, so a normal activity costs one write, and a repeated
// one none.
type ActivityWriter interface {
	// ActivityKinds returns the kinds the connector can log with its
	// settings (a HubSpot app without the communications scope cannot log
	// texts). syncd validate refuses a configuration asking for others.
	ActivityKinds() []ActivityKind
	// FindActivity returns the id of the activity of kind written earlier
	// with key on recordID, "" when there is none. It must find an
	// activity written by WriteActivity a moment before (a system whose
	// search lags looks in a way that does not, or waits it out).
	FindActivity(ctx context.Context, kind ActivityKind, key, recordID string) (string, error)
	// WriteActivity writes a: it creates the activity, set with a.Key and
	// attached to a.RecordID, when id is "", and otherwise replaces the
	// activity id with a's values. It returns the activity's id. Errors
	// are classified as Writer.Write's: *RefusedError when the system
	// refuses it for good (the activity becomes a dead letter naming the
	// reason, never the text), ErrOutcomeUnknown when it may have been
	// applied, ErrNotFound when id or the record is gone. The error must
	// never hold a.Text or the transcript.
	WriteActivity(ctx context.Context, id string, a Activity) (string, error)
}
