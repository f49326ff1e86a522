// Package activitytext words a call or a text (connector.Activity) the
// same way for every connector that logs it: a subject line, and a body
// of the message's text or the call's summary, next steps, recording link
// and transcript, as plain text or HTML. It also keeps the private parts
// (a message's text, a transcript) out of error messages that quote them.
package activitytext

import (
	"fmt"
	"html"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/syncd-io/syncd/connector"
)

// Subject is the activity's one-line title: "Call from +15551234567",
// "Text to +15551234567", "Incoming call" when the number is not known.
func Subject(a connector.Activity) string {
	what := "Call"
	if a.Kind == connector.ActivityMessage {
		what = "Text"
	}
	incoming := a.Direction == connector.DirectionIncoming
	number, prep := a.To, "to"
	if incoming {
		number, prep = a.From, "from"
	}
	if number == "" {
		dir := "Outgoing"
		if incoming {
			dir = "Incoming"
		}
		return dir + " " + strings.ToLower(what)
	}
	return what + " " + prep + " " + number
}

// Section is one titled part of an activity's body; Title is "" for a
// message's text.
type Section struct {
	Title string
	Lines []string
	// List marks lines that are items (a summary's points).
	List bool
}

// Sections returns the parts of the activity's body, in order: a
// message's text; a call's summary, next steps, recording link and
// transcript, each when present.
func Sections(a connector.Activity) []Section {
	var out []Section
	if a.Kind == connector.ActivityMessage {
		if a.Text != "" {
			out = append(out, Section{Lines: strings.Split(a.Text, "\n")})
		}
		return out
	}
	if len(a.Summary) > 0 {
		out = append(out, Section{Title: "Summary", Lines: a.Summary, List: true})
	}
	if len(a.NextSteps) > 0 {
		out = append(out, Section{Title: "Next steps", Lines: a.NextSteps, List: true})
	}
	if a.RecordingURL != "" {
		out = append(out, Section{Title: "Recording", Lines: []string{a.RecordingURL}})
	}
	if len(a.Transcript) > 0 {
		lines := make([]string, len(a.Transcript))
		for i, l := range a.Transcript {
			lines[i] = fmt.Sprintf("[%s] %s: %s", clock(l.Start), l.Speaker, l.Content)
		}
		out = append(out, Section{Title: "Transcript", Lines: lines})
	}
	return out
}

func clock(d time.Duration) string {
	s := int(d / time.Second)
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}

// Plain is the body as plain text, each section under its title,
// separated by a blank line.
func Plain(a connector.Activity) string {
	var b strings.Builder
	for i, s := range Sections(a) {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if s.Title != "" {
			b.WriteString(s.Title + ":\n")
		}
		for j, l := range s.Lines {
			if j > 0 {
				b.WriteString("\n")
			}
			if s.List {
				b.WriteString("- ")
			}
			b.WriteString(l)
		}
	}
	return b.String()
}

// HTML is the body as HTML (paragraphs, bold titles, lists), every text
// escaped; a recording link is a link.
func HTML(a connector.Activity) string {
	var b strings.Builder
	for _, s := range Sections(a) {
		if s.Title != "" {
			b.WriteString("<p><b>" + html.EscapeString(s.Title) + "</b></p>")
		}
		switch {
		case s.List:
			b.WriteString("<ul>")
			for _, l := range s.Lines {
				b.WriteString("<li>" + html.EscapeString(l) + "</li>")
			}
			b.WriteString("</ul>")
		case s.Title == "Recording":
			u := html.EscapeString(s.Lines[0])
			b.WriteString(`<p><a href="` + u + `">` + u + "</a></p>")
		default:
			b.WriteString("<p>")
			for j, l := range s.Lines {
				if j > 0 {
					b.WriteString("<br>")
				}
				b.WriteString(html.EscapeString(l))
			}
			b.WriteString("</p>")
		}
	}
	return b.String()
}

// Cut shortens s to at most n characters (runes), ending it with "…"
// when it was cut.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// CutBytes shortens s to at most n bytes on a character boundary, ending
// it with "…" when it was cut.
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Withheld replaces an error message that quotes the activity's private
// parts.
const Withheld = "(the system's message is withheld: it quotes the activity's text)"

// chunk is the length of the pieces of private text looked for in a
// message: a system that quotes a value quotes more than this of it.
const chunk = 16

// Redact returns msg, or Withheld when msg quotes a piece of the
// activity's message text or transcript (as a system quotes a value it
// refuses).
func Redact(msg string, a connector.Activity) string {
	if msg == "" {
		return msg
	}
	private := []string{a.Text}
	for _, l := range a.Transcript {
		private = append(private, l.Content)
	}
	for _, p := range private {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if len(p) <= chunk {
			if strings.Contains(msg, p) {
				return Withheld
			}
			continue
		}
		for i := 0; i+chunk <= len(p); i += chunk / 2 {
			if strings.Contains(msg, p[i:i+chunk]) {
				return Withheld
			}
		}
		if strings.Contains(msg, p[len(p)-chunk:]) {
			return Withheld
		}
	}
	return msg
}

// SummaryText is a call's summary and next steps as plain text ("" when
// it has neither).
func SummaryText(a connector.Activity) string {
	return Plain(connector.Activity{Kind: connector.ActivityCall, Summary: a.Summary, NextSteps: a.NextSteps})
}

// TranscriptText is a call's transcript, a line per turn:
// "[01:05] +15551230000: Hello".
func TranscriptText(a connector.Activity) string {
	for _, s := range Sections(connector.Activity{Kind: connector.ActivityCall, Transcript: a.Transcript}) {
		return strings.Join(s.Lines, "\n")
	}
	return ""
}
