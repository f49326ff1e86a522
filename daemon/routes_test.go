package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// routesConfig is a daemon's configuration against base with one CSV
// connector and its state file in dir.
func routesConfig(t *testing.T, base, dir string) *config.Config {
	t.Helper()
	csv := filepath.Join(dir, "contacts.csv")
	if err := os.WriteFile(csv, []byte("id,first_name,last_name,email\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: base, APIKey: "${TEST_API_KEY}", RateLimit: 1000, Burst: 100},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": csv}, Mapping: configfile.Names()}},
	}
	cfg, err := config.ParseConfig(f.YAML(), func(k string) string {
		if k == "TEST_API_KEY" {
			return envAPIKey
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestWebhookRoutesRememberedAcrossRestarts: against a service that has
// the webhook routes in one form only, the daemon's first registration
// finds the form out (one 404 at most), records it in the state file, and
// a restarted daemon uses it from its first call, with no request in the
// other form.
func TestWebhookRoutesRememberedAcrossRestarts(t *testing.T) {
	tests := []struct {
		name     string
		served   string
		wantForm string
		wantMiss int // 404s of the first daemon
	}{
		{name: "published document's /v1 form", served: emulator.RoutesV1, wantForm: workspace.WebhookRoutesV1, wantMiss: 1},
		{name: "spec's form", served: emulator.RoutesSpec, wantForm: workspace.WebhookRoutesSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			emu := emulator.NewServer(emulator.Options{APIKey: envAPIKey, Rate: -1, WebhookRoutes: tt.served})
			defer emu.Close()
			cfg := routesConfig(t, emu.URL, t.TempDir())
			const hook = "https://syncd.example.com/hooks/workspace"

			d, err := daemon.New(ctx, cfg, daemon.Options{Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Workspace().WebhookRoutesForm(); got != "" {
				t.Fatalf("a new state file knows the form %q", got)
			}
			reg, err := daemon.EnsureWebhook(ctx, d.Workspace(), d.Store().Webhooks, hook, logrus.NewEntry(quiet()))
			if err != nil || !reg.Created {
				t.Fatalf("register: %+v %v", reg, err)
			}
			if got := emu.Stats().Requests["GET (unmatched)"]; got != tt.wantMiss {
				t.Errorf("first daemon: %d requests in the form not served, want %d", got, tt.wantMiss)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			st, err := state.Open(cfg.State.Path, state.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			form, err := st.Webhooks.Routes()
			st.Close()
			if err != nil || form != tt.wantForm {
				t.Fatalf("state file records %q (%v), want %q", form, err, tt.wantForm)
			}

			before := emu.Stats().Requests
			d2, err := daemon.New(ctx, cfg, daemon.Options{Log: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			if got := d2.Workspace().WebhookRoutesForm(); got != tt.wantForm {
				t.Fatalf("restarted daemon's form %q, want %q", got, tt.wantForm)
			}
			reg, err = daemon.EnsureWebhook(ctx, d2.Workspace(), d2.Store().Webhooks, hook, logrus.NewEntry(quiet()))
			if err != nil || reg.Created || reg.Updated || reg.Rotated {
				t.Fatalf("second register: %+v %v, want the subscription found unchanged", reg, err)
			}
			after := emu.Stats().Requests
			if after["GET (unmatched)"] != before["GET (unmatched)"] {
				t.Errorf("restarted daemon asked the form not served: %v", after)
			}
			list := workspace.WebhookRoute(workspace.RouteListWebhooks, tt.wantForm)
			if after[list]-before[list] != 1 {
				t.Errorf("restarted daemon listed %d times, want 1", after[list]-before[list])
			}
		})
	}
}

// TestReadinessWithoutOrganizationRoute: against a service that answers
// GET /v1/organization 404, the workspace readiness check passes through
// the custom-field list.
func TestReadinessWithoutOrganizationRoute(t *testing.T) {
	ctx := context.Background()
	emu := emulator.NewServer(emulator.Options{APIKey: envAPIKey, Rate: -1, NoOrganization: true})
	defer emu.Close()
	d, err := daemon.New(ctx, routesConfig(t, emu.URL, t.TempDir()), daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkOK(t, d.Ready(ctx), "workspace", true)
	if got := emu.Stats().Requests[workspace.RouteCustomFields]; got < 1 {
		t.Errorf("custom-field list asked %d times, want the readiness check there", got)
	}
}
