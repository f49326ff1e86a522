package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// emuAPI drives the emulator in tests: through the API as an operator
// would, and through the back door as a person in the app would.
type emuAPI struct {
	t    *testing.T
	base string
}

func (a *emuAPI) client() *workspace.Client {
	c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: a.base, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100})
	if err != nil {
		a.t.Fatal(err)
	}
	return c
}

func (a *emuAPI) disable(id string) (workspace.Webhook, error) {
	return a.client().UpdateWebhook(context.Background(), id, workspace.WebhookPatch{Status: workspace.Some(workspace.WebhookDisabled)})
}

// app calls the back door and decodes its {data: T} answer.
func app[T any](t *testing.T, base, method, path string, body any) T {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var out struct {
		Data T `json:"data"`
	}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out)
	}
	return out.Data
}

func (a *emuAPI) appCreate(first string) workspace.Contact {
	return app[workspace.Contact](a.t, a.base, "POST", "/_emulator/app/contacts",
		workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{FirstName: first}})
}

func (a *emuAPI) appPatch(id string, p workspace.ContactPatch) workspace.Contact {
	return app[workspace.Contact](a.t, a.base, "PATCH", "/_emulator/app/contacts/"+id, p)
}
