package reverse

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// appDo calls the emulator's back door (a person using the app) and
// decodes the {data: T} answer.
func appDo[T any](t *testing.T, base, method, path string, body any) T {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return out.Data
}

func eventBody(t *testing.T, id, typ string, c workspace.Contact) []byte {
	t.Helper()
	res, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(workspace.Event{ID: id, APIVersion: workspace.DefaultVersion, CreatedAt: time.Now().UTC(), Type: typ,
		Data: workspace.EventData{Resource: res}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
