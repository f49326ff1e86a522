package policy

import "slices"

// ActivityLog is one kind of the workspace's activity a connector logs on
// its records (a connector's activities.log).
type ActivityLog string

// What activities.log may list.
const (
	LogCalls       ActivityLog = "calls"       // every call, as an activity on the record
	LogMessages    ActivityLog = "messages"    // every text, as an activity on the record
	LogSummaries   ActivityLog = "summaries"   // a call's summary and next steps, in its activity
	LogTranscripts ActivityLog = "transcripts" // a call's transcript, in its activity
	LogRecordings  ActivityLog = "recordings"  // the link to a call's recording, in its activity
)

// UnknownNumbers is what a call or text with a number no link knows does
// (a connector's activities.unknownNumbers).
type UnknownNumbers string

// UnknownNumbers policies.
const (
	UnknownSkip   UnknownNumbers = "skip"   // counted, nothing written
	UnknownCreate UnknownNumbers = "create" // the record is created, linked to a new contact, and the activity logged on it
)

var (
	activityLogs   = []ActivityLog{LogCalls, LogMessages, LogSummaries, LogTranscripts, LogRecordings}
	unknownNumbers = []UnknownNumbers{UnknownSkip, UnknownCreate}
)

func (a ActivityLog) String() string    { return string(a) }
func (u UnknownNumbers) String() string { return string(u) }

// Valid reports whether a is an allowed value ("" is not).
func (a ActivityLog) Valid() bool    { return slices.Contains(activityLogs, a) }
func (u UnknownNumbers) Valid() bool { return slices.Contains(unknownNumbers, u) }

// Allowed lists the allowed values, in documentation order.
func (ActivityLog) Allowed() []string    { return names(activityLogs) }
func (UnknownNumbers) Allowed() []string { return names(unknownNumbers) }

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (a *ActivityLog) UnmarshalText(text []byte) error {
	return parse(a, text, activityLogs, "activity kind")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (u *UnknownNumbers) UnmarshalText(text []byte) error {
	return parse(u, text, unknownNumbers, "unknownNumbers policy")
}
