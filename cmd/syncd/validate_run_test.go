package main

import (
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestValidateMakesTheChecksRunMakes: what run refuses at start-up
// (a mapped custom field the workspace lacks, an API key the workspace
// refuses, a state file cut short) validate refuses too, every problem
// in one report; what validate passes, run starts with.
func TestValidateMakesTheChecksRunMakes(t *testing.T) {
	tests := []struct {
		name      string
		custom    map[string]string // custom.<key>: column
		apiKey    string
		emptyFile bool // the state file is cut to 0 bytes
		want      []string
		runSays   string // run's refusal, the first it meets
	}{
		{name: "every mapped custom field exists", custom: map[string]string{"vip": "vip"}, apiKey: "k"},
		{name: "a mapped custom field the workspace lacks", custom: map[string]string{"vip": "vip", "tier": "tier"}, apiKey: "k",
			want:    []string{`connectors[crm].mapping.fields.custom.tier: the workspace has no custom field with key "tier"; define it in the workspace's app first`},
			runSays: `fields.custom.tier: the workspace has no custom field with key "tier"`},
		{name: "two of them and a state file cut short", custom: map[string]string{"tier": "tier", "seats": "vip"}, apiKey: "k", emptyFile: true,
			want: []string{`fields.custom.tier: the workspace has no custom field with key "tier"`,
				`fields.custom.seats: the workspace has no custom field with key "seats"`, "state.path: ", "0 bytes"},
			runSays: "empty file (0 bytes)"},
		{name: "an API key the workspace refuses", custom: map[string]string{"vip": "vip"}, apiKey: "wrong",
			want:    []string{"workspace.apiKey: the workspace refused the API key"},
			runSays: "401 Unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := emulator.New(emulator.Options{APIKey: "k", Rate: -1, CustomFields: []workspace.CustomFieldDefinition{
				{Name: "VIP", Key: "vip", Type: workspace.FieldBoolean}}})
			t.Cleanup(emu.Close)
			srv := httptest.NewServer(emu.Handler())
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			csvPath := filepath.Join(dir, "contacts.csv")
			if err := os.WriteFile(csvPath, []byte("id,first_name,vip,tier\n1,Ada,true,gold\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			statePath := filepath.Join(dir, "syncd.db")
			if tt.emptyFile {
				if err := os.WriteFile(statePath, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fields := map[string]configfile.Field{"firstName": configfile.From("first_name")}
			for key, col := range tt.custom {
				fields["custom."+key] = configfile.From(col)
			}
			cfg := filepath.Join(dir, "syncd.yaml")
			f := configfile.File{
				Workspace: configfile.Workspace{BaseURL: srv.URL, APIKey: tt.apiKey, CustomFieldValues: emulator.TestCustomFieldValues()},
				State:     configfile.State{Path: statePath},
				Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Settings: map[string]any{"path": csvPath},
					Mapping: configfile.Mapping{ExternalID: "id", Fields: fields}}},
			}
			if err := f.Write(cfg); err != nil {
				t.Fatal(err)
			}

			_, verr, vErr := runMain(t, "validate", "--config", cfg)
			_, rerr, rErr := runMain(t, "run", "--once", "--config", cfg)
			if len(tt.want) == 0 {
				if vErr != nil || rErr != nil {
					t.Fatalf("validate = %v, run = %v; want both to pass\n%s\n%s", vErr, rErr, verr, rerr)
				}
				if n := len(emu.Contacts()); n != 1 {
					t.Errorf("run synced %d contacts, want 1", n)
				}
				return
			}
			var ie *InvalidConfigError
			if !errors.As(vErr, &ie) || ie.Problems != len(tt.want)-boolInt(tt.emptyFile) {
				t.Fatalf("validate = %v, want %d problems\n%s", vErr, len(tt.want)-boolInt(tt.emptyFile), verr)
			}
			wantLines(t, "validate's report", verr, tt.want...)
			if rErr == nil {
				t.Fatalf("run started with a configuration validate refused")
			}
			// run stops at its first refusal, one validate reported.
			if !strings.Contains(rErr.Error(), tt.runSays) {
				t.Errorf("run refused with %v, want %q", rErr, tt.runSays)
			}
			if n := len(emu.Contacts()); n != 0 {
				t.Errorf("run wrote %d contacts", n)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
