package activity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// Item is what syncd knows of one call or text, merged from its events
// (and catch-up's listings). It is kept in state by its key.
type Item struct {
	Kind       connector.ActivityKind    `json:"kind"`
	ID         string                    `json:"id"`
	Call       *workspace.Call           `json:"call,omitempty"`
	Message    *workspace.Message        `json:"message,omitempty"`
	Summary    *workspace.CallSummary    `json:"summary,omitempty"`
	Transcript *workspace.CallTranscript `json:"transcript,omitempty"`
	// RecordingURL is the call's last recording's location.
	RecordingURL string `json:"recordingUrl,omitempty"`
}

// itemKey is an item's key in state: "call:AC..." or "message:AM...".
func itemKey(kind connector.ActivityKind, id string) string { return string(kind) + ":" + id }

// badEvent is an event that does not hold what its type says.
type badEvent struct{ reason string }

func (b *badEvent) Error() string { return b.reason }

// merge reads ev into its item and stores the item. primary is true for
// the event that makes the call or text known (call.completed, a
// message event): the one a skipped number is counted on.
func (l *Logger) merge(ev state.ActivityEvent) (it *Item, primary bool, err error) {
	var env struct {
		Data workspace.EventData `json:"data"`
	}
	if err := json.Unmarshal(ev.Body, &env); err != nil {
		return nil, false, &badEvent{"body is not an event envelope"}
	}
	raw, where := env.Data.Payload()
	if where == "" {
		return nil, false, &badEvent{"event carries no resource"}
	}
	switch ev.Type {
	case workspace.EventCallCompleted, workspace.EventCallRecordingCompleted:
		var c workspace.Call
		if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
			return nil, false, &badEvent{"call without an id"}
		}
		it, err = l.loadItem(connector.ActivityCall, c.ID)
		if err != nil {
			return nil, false, err
		}
		if ev.Type == workspace.EventCallRecordingCompleted {
			for _, m := range c.Media {
				if m.URL != "" {
					it.RecordingURL = m.URL
				}
			}
			c.Media = nil
			if it.Call == nil {
				it.Call = &c
			}
		} else {
			c.Media = nil
			it.Call, primary = &c, true
		}
	case workspace.EventCallSummaryCompleted:
		var s workspace.CallSummary
		if err := json.Unmarshal(raw, &s); err != nil || s.CallID == "" {
			return nil, false, &badEvent{"summary without a callId"}
		}
		if it, err = l.loadItem(connector.ActivityCall, s.CallID); err != nil {
			return nil, false, err
		}
		it.Summary = &s
	case workspace.EventCallTranscriptCompleted:
		var t workspace.CallTranscript
		if err := json.Unmarshal(raw, &t); err != nil || t.CallID == "" {
			return nil, false, &badEvent{"transcript without a callId"}
		}
		if it, err = l.loadItem(connector.ActivityCall, t.CallID); err != nil {
			return nil, false, err
		}
		it.Transcript = &t
	case workspace.EventMessageReceived, workspace.EventMessageDelivered:
		var m workspace.Message
		if err := json.Unmarshal(raw, &m); err != nil || m.ID == "" {
			return nil, false, &badEvent{"message without an id"}
		}
		if it, err = l.loadItem(connector.ActivityMessage, m.ID); err != nil {
			return nil, false, err
		}
		it.Message, primary = &m, true
	default:
		return nil, false, &badEvent{"not a call or message event"}
	}
	if err := l.saveItem(it); err != nil {
		return nil, false, err
	}
	if primary {
		if err := l.touchPairs(it); err != nil {
			return nil, false, err
		}
	}
	return it, primary, nil
}

func (l *Logger) loadItem(kind connector.ActivityKind, id string) (*Item, error) {
	raw, ok, err := l.opts.Queue.Item(itemKey(kind, id))
	if err != nil {
		return nil, err
	}
	it := &Item{Kind: kind, ID: id}
	if ok {
		if err := json.Unmarshal(raw, it); err != nil {
			return nil, fmt.Errorf("decode activity item %s: %w", itemKey(kind, id), err)
		}
	}
	return it, nil
}

func (l *Logger) saveItem(it *Item) error {
	raw, err := json.Marshal(it)
	if err != nil {
		return err
	}
	return l.opts.Queue.PutItem(itemKey(it.Kind, it.ID), raw)
}

// ready reports whether the call or text itself is known.
func (it *Item) ready() bool { return it.Call != nil || it.Message != nil }

func (it *Item) logKind() policy.ActivityLog {
	if it.Kind == connector.ActivityCall {
		return policy.LogCalls
	}
	return policy.LogMessages
}

// numbers are the other parties' numbers: a call's participants, an
// incoming text's sender, an outgoing text's recipients.
func (it *Item) numbers() []string {
	switch {
	case it.Call != nil:
		return it.Call.Participants
	case it.Message != nil && it.Message.Direction == workspace.Outgoing:
		return it.Message.To
	case it.Message != nil:
		return []string{it.Message.From}
	}
	return nil
}

// activity is the item as an activity on record r of t, with what t's
// log asks for and nothing more.
func (it *Item) activity(t *Target, r record) connector.Activity {
	a := connector.Activity{Key: string(it.Kind) + ":" + it.ID + ":" + r.id, Kind: it.Kind, RecordID: r.id, SourceID: it.ID}
	if c := it.Call; c != nil {
		a.Direction, a.At, a.Status = c.Direction, c.CreatedAt, c.Status
		a.Duration = time.Duration(c.Duration) * time.Second
		if c.Direction == workspace.Outgoing {
			a.To = r.number
		} else {
			a.From = r.number
		}
		if s := it.Summary; s != nil && t.logs(policy.LogSummaries) {
			a.Summary, a.NextSteps = s.Summary, s.NextSteps
		}
		if tr := it.Transcript; tr != nil && t.logs(policy.LogTranscripts) {
			for _, d := range tr.Dialogue {
				a.Transcript = append(a.Transcript, connector.TranscriptLine{Speaker: d.Identifier, Content: d.Content,
					Start: seconds(d.Start), End: seconds(d.End)})
			}
		}
		if t.logs(policy.LogRecordings) {
			a.RecordingURL = it.RecordingURL
		}
	}
	if m := it.Message; m != nil {
		a.Direction, a.At, a.Status, a.Text, a.From = m.Direction, m.CreatedAt, m.Status, m.Text, m.From
		if m.Direction == workspace.Outgoing {
			a.To = r.number
		} else if len(m.To) > 0 {
			a.To = m.To[0]
		}
	}
	return a
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// hashOf is the digest of what an activity holds: a write whose value
// was written before is not sent again.
func hashOf(a connector.Activity) string {
	raw, _ := json.Marshal(a)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

// private returns the values of a that must never be logged.
func private(a connector.Activity) []string {
	var out []string
	if strings.TrimSpace(a.Text) != "" {
		out = append(out, a.Text)
	}
	for _, l := range a.Transcript {
		if strings.TrimSpace(l.Content) != "" {
			out = append(out, l.Content)
		}
	}
	return out
}

// redact cuts the private values of a out of s.
func redact(s string, a connector.Activity) string {
	for _, p := range private(a) {
		s = strings.ReplaceAll(s, p, "[private]")
		if q, err := json.Marshal(p); err == nil { // as a JSON string, escaped
			s = strings.ReplaceAll(s, strings.Trim(string(q), `"`), "[private]")
		}
	}
	return s
}
