package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestEmulatorCRMWebhooksStartAPass runs the daemon on the config a CRM
// stand-in prints, its webhooks on: an edit made through the stand-in's
// API reaches the workspace by the stand-in's webhook within seconds,
// where the connector's schedule (every 5 minutes) would take minutes.
// HubSpot's stand-in is told the target (--webhook-url); Pipedrive's is
// told by syncd (webhooks register), with the settings the printed
// comment shows.
func TestEmulatorCRMWebhooksStartAPass(t *testing.T) {
	tests := []struct {
		name  string
		flags func(hooks string) []string
		// config turns the printed section into the connector's.
		config func(printed, hooks string) string
		// register registers the webhooks, when syncd does it.
		register bool
		// edit changes record id through the API at base; want is the
		// contact's last name after.
		edit func(t *testing.T, base, id string)
		want string
	}{
		{
			name: "hubspot",
			flags: func(hooks string) []string {
				return []string{"--webhook-url", "http://" + hooks + "/webhooks/connectors/hubspot", "--webhook-secret", "a-client-secret"}
			},
			config: func(printed, _ string) string { return printed },
			edit: func(t *testing.T, base, id string) {
				call(t, "POST", base+"/crm/v3/objects/contacts/batch/update", "Authorization", "Bearer hubspotemu-token",
					`{"inputs":[{"id":"`+id+`","properties":{"lastname":"Byron"}}]}`)
			},
			want: "Byron",
		},
		{
			name:  "pipedrive",
			flags: func(string) []string { return nil },
			config: func(printed, hooks string) string {
				hint := regexp.MustCompile(`(?m)^      # (webhooks: .*)$`)
				if !hint.MatchString(printed) {
					t.Fatalf("no webhooks hint printed:\n%s", printed)
				}
				return hint.ReplaceAllStringFunc(printed, func(line string) string {
					line = strings.Replace(line, "# ", "", 1)
					line = strings.Replace(line, "RECEIVER", hooks, 1)
					return strings.Replace(line, "A-RANDOM-SECRET-16+", "0123456789abcdefXYZ", 1)
				})
			},
			register: true,
			edit: func(t *testing.T, base, id string) {
				call(t, "PATCH", base+"/api/v2/persons/"+id, "x-api-token", "pipedriveemu-token", `{"name":"Ada Byron"}`)
			},
			want: "Byron",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := emulator.Listen("127.0.0.1:0", emulator.Options{APIKey: "ws-key", Rate: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			hooks := e2e.FreeAddr(t)
			e := startCRMEmulator(t, append([]string{"--crm", tt.name, "--sample", "3"}, tt.flags(hooks)...)...)
			dir := t.TempDir()
			cfg := filepath.Join(dir, "syncd.yaml")
			head := fmt.Sprintf("workspace:\n  baseURL: %s\n  apiKey: ws-key\nstate:\n  path: %s\nadmin:\n  listen: \"\"\nwebhooks:\n  listen: %s\n", ws.URL, filepath.Join(dir, "syncd.db"), hooks)
			if err := os.WriteFile(cfg, []byte(head+tt.config(e.stdout.String(), hooks)), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.register {
				if out, errOut, err := runMain(t, "webhooks", "register", "--config", cfg); err != nil || !strings.Contains(out, "created") {
					t.Fatalf("webhooks register: %v\n%s%s", err, out, errOut)
				}
			}
			out := runDaemon(t, cfg)
			lastName := func(externalID string) (string, int) {
				name, n := "", 0
				for _, c := range ws.Contacts() {
					n++
					if deref(c.ExternalID) == externalID {
						name = deref(c.DefaultFields.LastName)
					}
				}
				return name, n
			}
			waitUntil(t, out, "the first pass", func() bool { _, n := lastName(""); return n == 3 })
			id := deref(ws.Contacts()[0].ExternalID)
			base := regexp.MustCompile(`baseURL: (\S+)`).FindStringSubmatch(e.stdout.String())[1]
			tt.edit(t, base, id)
			waitUntil(t, out, "the edit reaching the workspace by webhook", func() bool { n, _ := lastName(id); return n == tt.want })
		})
	}
}

// runDaemon runs `syncd run` in-process until the test ends, its output
// captured.
func runDaemon(t *testing.T, cfg string) *capture.Buffer {
	t.Helper()
	out := &capture.Buffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: out, Stderr: out, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"run", "--config", cfg}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("run did not stop")
		}
	})
	return out
}

// waitUntil waits up to 30 s for cond, failing with the daemon's output.
func waitUntil(t *testing.T, out *capture.Buffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s\n%s", what, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call sends a JSON request with one auth header and wants a 2xx.
func call(t *testing.T, method, url, authHeader, auth, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set(authHeader, auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
}
