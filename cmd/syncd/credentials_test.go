package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestRunChecksCredentialsWithoutOrganizationRoute: against a service
// whose GET /v1/organization answers 404 (a version without the route),
// `syncd run --once` checks the API key with the custom-field list, says
// so in the log, and syncs; a wrong key still stops it with the fix.
func TestRunChecksCredentialsWithoutOrganizationRoute(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		wantErr string
		wantOut string
	}{
		{name: "valid key", key: emulator.DefaultAPIKey, wantOut: "crm: created=3"},
		{name: "wrong key", key: "wrong-key", wantErr: "the workspace refused the API key (workspace.apiKey)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := emulator.NewServer(emulator.Options{Rate: -1, NoOrganization: true})
			t.Cleanup(emu.Close)
			cfg := e2e.WriteCSVConfig(t, t.TempDir(), e2e.CSVOptions{EmulatorURL: emu.URL, APIKey: tt.key, Rows: 3, RateLimit: 100, Burst: 10})
			var out, errOut bytes.Buffer
			m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
			err := m.Run(context.Background(), []string{"run", "--once", "--config", cfg})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("run: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, errOut.String())
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantOut, out.String())
			}
			if !strings.Contains(errOut.String(), "checked with the custom-field list instead") {
				t.Errorf("no log line says the key was checked with the custom-field list:\n%s", errOut.String())
			}
		})
	}
}

// TestWebhooksCommandsRememberRouteForm: against a service with the
// webhook routes under /v1 only (the published document's form),
// `syncd webhooks register` finds the form out with one 404, records it
// in the state file, and rotate and list use it with no 404 more.
func TestWebhooksCommandsRememberRouteForm(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1, WebhookRoutes: emulator.RoutesV1})
	defer emu.Close()
	cfg, statePath := webhookConfig(t, emu.URL, "https://syncd.example.com/webhooks/workspace", "1h")
	misses := func() int { return emu.Stats().Requests["GET (unmatched)"] }

	if out, _, err := runMain(t, "webhooks", "register", "--config", cfg); err != nil || !strings.Contains(out, "created") {
		t.Fatalf("register: %q %v", out, err)
	}
	if got := misses(); got != 1 {
		t.Fatalf("register asked the spec's form %d times, want 1", got)
	}
	st, err := state.Open(statePath, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	form, err := st.Webhooks.Routes()
	st.Close()
	if err != nil || form != workspace.WebhookRoutesV1 {
		t.Fatalf("state records %q (%v), want v1", form, err)
	}
	if out, _, err := runMain(t, "webhooks", "rotate", "--config", cfg); err != nil || !strings.Contains(out, "new secret stored") {
		t.Fatalf("rotate: %q %v", out, err)
	}
	if out, _, err := runMain(t, "webhooks", "list", "--config", cfg); err != nil || !strings.Contains(out, "secrets in state: 2") {
		t.Fatalf("list: %q %v", out, err)
	}
	if got := misses(); got != 1 {
		t.Fatalf("rotate and list asked the spec's form %d more times, want none", got-1)
	}
	if n := emu.Stats().Requests["POST /v1/webhooks/{id}/rotate"]; n != 1 {
		t.Fatalf("rotate went to the /v1 route %d times, want 1", n)
	}
}
