package activitytext

import (
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

func TestWording(t *testing.T) {
	call := connector.Activity{Kind: connector.ActivityCall, Direction: connector.DirectionOutgoing, To: "+15551230000",
		Summary: []string{"Quote <b>asked</b>"}, NextSteps: []string{"Send it"}, RecordingURL: "https://r.example/1?a=1&b=2",
		Transcript: []connector.TranscriptLine{{Speaker: "+15551230000", Start: 65 * time.Second, Content: "Hello"}}}
	cases := []struct {
		name                 string
		a                    connector.Activity
		subject, plain, html string
	}{
		{"outgoing call with everything", call, "Call to +15551230000",
			"Summary:\n- Quote <b>asked</b>\n\nNext steps:\n- Send it\n\nRecording:\nhttps://r.example/1?a=1&b=2\n\nTranscript:\n[01:05] +15551230000: Hello",
			`<p><b>Summary</b></p><ul><li>Quote &lt;b&gt;asked&lt;/b&gt;</li></ul><p><b>Next steps</b></p><ul><li>Send it</li></ul>` +
				`<p><b>Recording</b></p><p><a href="https://r.example/1?a=1&amp;b=2">https://r.example/1?a=1&amp;b=2</a></p>` +
				`<p><b>Transcript</b></p><p>[01:05] +15551230000: Hello</p>`},
		{"incoming text", connector.Activity{Kind: connector.ActivityMessage, Direction: connector.DirectionIncoming, From: "+1555",
			Text: "a\nb & c"}, "Text from +1555", "a\nb & c", "<p>a<br>b &amp; c</p>"},
		{"incoming call, number unknown, nothing logged", connector.Activity{Kind: connector.ActivityCall, Direction: connector.DirectionIncoming},
			"Incoming call", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subject(tc.a); got != tc.subject {
				t.Errorf("subject %q, want %q", got, tc.subject)
			}
			if got := Plain(tc.a); got != tc.plain {
				t.Errorf("plain %q, want %q", got, tc.plain)
			}
			if got := HTML(tc.a); got != tc.html {
				t.Errorf("html %q, want %q", got, tc.html)
			}
		})
	}
}

func TestRedactAndCut(t *testing.T) {
	a := connector.Activity{Text: "the door code is 4711, come in", Transcript: []connector.TranscriptLine{{Content: "pin 1234"}}}
	cases := []struct{ name, msg, want string }{
		{"quotes the whole text", "value too large: the door code is 4711, come in", Withheld},
		{"quotes part of the text", "bad value: code is 4711, come", Withheld},
		{"quotes a short transcript line", "x pin 1234 y", Withheld},
		{"names only the field", "Description: value too large", "Description: value too large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.msg, a); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
	if got := Cut("héllo", 4); got != "hél…" {
		t.Errorf("Cut = %q", got)
	}
	if got := CutBytes("héllo", 5); got != "h…" || !strings.HasSuffix(CutBytes(strings.Repeat("é", 10), 7), "…") {
		t.Errorf("CutBytes = %q", got)
	}
}
