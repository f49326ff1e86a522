package activity

import (
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// TestRedactCutsTextsAndTranscripts: a system's refusal that echoes a
// text or a transcript line (plain or JSON-escaped) loses them before it
// is logged or kept as a dead letter.
func TestRedactCutsTextsAndTranscripts(t *testing.T) {
	a := connector.Activity{Text: `my "card" is 4111`, Transcript: []connector.TranscriptLine{{Content: "secret plan"}}}
	for name, in := range map[string]string{
		"plain":   `Property values were not valid: my "card" is 4111`,
		"escaped": `{"message":"my \"card\" is 4111"}`,
		"line":    `hs_call_body: [0s] +1555: secret plan`,
	} {
		t.Run(name, func(t *testing.T) {
			out := redact(in, a)
			if strings.Contains(out, "4111") || strings.Contains(out, "secret plan") {
				t.Errorf("redact(%q) = %q", in, out)
			}
		})
	}
}

// TestActivityHoldsOnlyWhatLogAsks: transcripts and recordings reach an
// activity only when the target's log lists them.
func TestActivityHoldsOnlyWhatLogAsks(t *testing.T) {
	it := &Item{Kind: connector.ActivityCall, ID: "AC1",
		Call:         &workspace.Call{ID: "AC1", Direction: workspace.Incoming, Participants: []string{"+15550001111"}, Duration: 3},
		Summary:      &workspace.CallSummary{CallID: "AC1", Summary: []string{"s"}},
		Transcript:   &workspace.CallTranscript{CallID: "AC1", Dialogue: []workspace.DialogueLine{{Content: "words"}}},
		RecordingURL: "https://r"}
	cases := []struct {
		name                          string
		log                           []policy.ActivityLog
		summary, transcript, recorded bool
	}{
		{"calls only", []policy.ActivityLog{policy.LogCalls}, false, false, false},
		{"with summaries", []policy.ActivityLog{policy.LogCalls, policy.LogSummaries}, true, false, false},
		{"everything", []policy.ActivityLog{policy.LogCalls, policy.LogSummaries, policy.LogTranscripts, policy.LogRecordings}, true, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := it.activity(&Target{Name: "crm", Log: c.log}, record{id: "7", number: "+15550001111"})
			if (len(a.Summary) > 0) != c.summary || (len(a.Transcript) > 0) != c.transcript || (a.RecordingURL != "") != c.recorded {
				t.Errorf("activity = %+v", a)
			}
			if a.Key != "call:AC1:7" || a.From != "+15550001111" {
				t.Errorf("key %q from %q", a.Key, a.From)
			}
		})
	}
}
