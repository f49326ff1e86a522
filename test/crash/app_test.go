package crash

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
)

// appDo calls the emulator's back door as a person in the app would and
// returns the contact it answers with.
func appDo(t *testing.T, base, method, path string, body any) workspace.Contact {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+"/_emulator/app/contacts"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("app %s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var out struct {
		Data workspace.Contact `json:"data"`
	}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out)
	}
	return out.Data
}

// removeState deletes the state file named in the configuration.
func removeState(cfgPath string) error {
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "path: "); ok && strings.HasSuffix(p, ".db") {
			return os.Remove(p)
		}
	}
	return os.ErrNotExist
}
