package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/test/e2e"
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
