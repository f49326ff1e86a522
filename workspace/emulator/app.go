package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/syncd-io/syncd/workspace"
)

// App does what a person using the workspace's app does, through the
// back door of an emulator served at BaseURL: no API key, rate limit or
// faults, and the contact.* webhooks follow as for any change. Tests and
// demos use it to make changes syncd did not make.
type App struct {
	BaseURL string
	// HTTP is the client; nil means http.DefaultClient.
	HTTP *http.Client
}

// CreateContact creates a contact as the app does: with no default
// source.
func (a App) CreateContact(ctx context.Context, in workspace.ContactCreate) (workspace.Contact, error) {
	var c workspace.Contact
	return c, a.do(ctx, http.MethodPost, "", in, &c)
}

// UpdateContact edits a contact.
func (a App) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	var c workspace.Contact
	return c, a.do(ctx, http.MethodPatch, "/"+id, p, &c)
}

// DeleteContact deletes a contact.
func (a App) DeleteContact(ctx context.Context, id string) error {
	return a.do(ctx, http.MethodDelete, "/"+id, nil, nil)
}

// do calls the back door's app/contacts route and decodes the {data: …}
// answer into out.
func (a App) do(ctx context.Context, method, path string, body any, out *workspace.Contact) error {
	if out == nil {
		return a.call(ctx, method, "app/contacts"+path, body, nil)
	}
	return a.call(ctx, method, "app/contacts"+path, body, out)
}

// call sends body (JSON, none when nil) to the back door's route and
// decodes the {data: …} answer into out (unless nil).
func (a App) call(ctx context.Context, method, route string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.BaseURL+backdoorPrefix+route, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	hc := a.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("app %s %s: %s: %s", method, route, resp.Status, raw)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	env := struct {
		Data any `json:"data"`
	}{Data: out}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("app %s %s: %w in %s", method, route, err, raw)
	}
	return nil
}
