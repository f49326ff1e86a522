package emulator

import (
	"context"
	"net/http"

	"github.com/syncd-io/syncd/workspace"
)

// CallIn is a call made in the app (POST /_emulator/app/calls).
type CallIn struct {
	Participants []string `json:"participants"`
	Direction    string   `json:"direction"`
	Status       string   `json:"status,omitempty"`
	Duration     int      `json:"duration"`
	UserID       string   `json:"userId,omitempty"`
}

// MessageIn is a text sent or received in the app (POST
// /_emulator/app/messages).
type MessageIn struct {
	From      string   `json:"from"`
	To        []string `json:"to"`
	Text      string   `json:"text"`
	Direction string   `json:"direction"`
	UserID    string   `json:"userId,omitempty"`
}

// Call makes a call end in the workspace: it is listed, and call.completed
// is delivered. It returns the call's id.
func (a App) Call(ctx context.Context, in CallIn) (string, error) {
	return a.post(ctx, "app/calls", in)
}

// Summarize gives call id its summary (call.summary.completed).
func (a App) Summarize(ctx context.Context, id string, summary, nextSteps []string) error {
	_, err := a.post(ctx, "app/calls/"+id+"/summary", map[string][]string{"summary": nonNil(summary), "nextSteps": nonNil(nextSteps)})
	return err
}

// Transcribe gives call id its transcript (call.transcript.completed).
func (a App) Transcribe(ctx context.Context, id string, dialogue []workspace.DialogueLine) error {
	_, err := a.post(ctx, "app/calls/"+id+"/transcript", map[string]any{"dialogue": dialogue})
	return err
}

// Record gives call id a recording (call.recording.completed); url may be
// empty for one of the emulator's.
func (a App) Record(ctx context.Context, id, url string) error {
	body := map[string]any{}
	if url != "" {
		body["url"] = url
	}
	_, err := a.post(ctx, "app/calls/"+id+"/recording", body)
	return err
}

// Message sends or receives a text (message.delivered or
// message.received). It returns the message's id.
func (a App) Message(ctx context.Context, in MessageIn) (string, error) {
	return a.post(ctx, "app/messages", in)
}

// post sends body to the back door's route and returns data.id.
func (a App) post(ctx context.Context, route string, body any) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := a.call(ctx, http.MethodPost, route, body, &out)
	return out.ID, err
}
