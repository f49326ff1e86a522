package connector

// ActivityTable is where a connector of a database (Type.ActivityTable)
// writes the workspace's calls and texts: a table the configuration names
// (activities.table) and which of its columns take each field of an
// Activity (activities.mapping, field -> column). Each activity is one
// row, found and replaced by its key column, which must be unique.
type ActivityTable struct {
	Table   string
	Columns map[string]string
}

// The fields of an Activity a table's mapping may name, as the mapping
// spells them; ActivityFields lists them in order.
const (
	ActivityFieldKey        = "key"        // Activity.Key; required, a unique column
	ActivityFieldContact    = "contact"    // Activity.RecordID, the row of the contact table; required
	ActivityFieldKind       = "kind"       // call or message
	ActivityFieldAt         = "at"         // when the call started or the text was sent
	ActivityFieldDirection  = "direction"  // incoming or outgoing
	ActivityFieldFrom       = "from"       // the number it came from
	ActivityFieldTo         = "to"         // the number it went to
	ActivityFieldStatus     = "status"     // the workspace's status
	ActivityFieldDuration   = "duration"   // a call's length in whole seconds
	ActivityFieldOwner      = "owner"      // the workspace user's e-mail
	ActivityFieldSubject    = "subject"    // one line: "Call from +1..."
	ActivityFieldSummary    = "summary"    // the call's summary and next steps, as text
	ActivityFieldText       = "text"       // a text's body
	ActivityFieldTranscript = "transcript" // the call's transcript, as text
	ActivityFieldRecording  = "recording"  // the recording's URL
	ActivityFieldSourceID   = "sourceId"   // the workspace's id of the call or message
)

// ActivityFields returns the fields an activity table's mapping may name,
// in documentation order.
func ActivityFields() []string {
	return []string{ActivityFieldKey, ActivityFieldContact, ActivityFieldKind, ActivityFieldAt, ActivityFieldDirection,
		ActivityFieldFrom, ActivityFieldTo, ActivityFieldStatus, ActivityFieldDuration, ActivityFieldOwner, ActivityFieldSubject,
		ActivityFieldSummary, ActivityFieldText, ActivityFieldTranscript, ActivityFieldRecording, ActivityFieldSourceID}
}

// RequiredActivityFields are the fields every activity table maps.
func RequiredActivityFields() []string { return []string{ActivityFieldKey, ActivityFieldContact} }
