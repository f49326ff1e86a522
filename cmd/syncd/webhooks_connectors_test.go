package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// `syncd webhooks register` registers a Pipedrive connector's change
// webhook and says what to enter in HubSpot's app settings; again, it
// keeps the webhook; with --replace it makes it anew.
func TestWebhooksRegisterConnectors(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	pd := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(pd.Close)
	hs := hubspotemu.NewServer(hubspotemu.Options{})
	t.Cleanup(hs.Close)
	const pdURL, hsURL = "https://syncd.example.com/webhooks/connectors/pd", "https://syncd.example.com/webhooks/connectors/hs"
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: "emulator-key"},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{
			{Name: "pd", Type: "pipedrive", Settings: map[string]any{"apiToken": pd.Token(), "baseURL": pd.URL,
				"webhooks": map[string]any{"url": pdURL, "password": "a-long-enough-password"}},
				Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}},
			{Name: "hs", Type: "hubspot", Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL,
				"webhooks": map[string]any{"clientSecret": "app-secret", "url": hsURL}},
				Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{"firstName": configfile.From("firstname")}}},
		},
	}
	cfg := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	var firstID int64
	for _, step := range []struct {
		name string
		args []string
		want []string
		same bool // the Pipedrive webhook is the one of the step before
	}{
		{"first", nil, []string{"not registered (webhooks.publicURL is not set)", "connector pd: webhook", "created", "connector hs: set up by hand", "target URL " + hsURL, "contact.propertyChange"}, false},
		{"again", nil, []string{"connector pd: webhook", "kept"}, true},
		{"replace", []string{"--replace"}, []string{"connector pd: webhook", "created", "replacing"}, false},
	} {
		out, _, err := runMain(t, append([]string{"webhooks", "register", "--config", cfg}, step.args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", step.name, err, out)
		}
		for _, w := range step.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", step.name, w, out)
			}
		}
		if strings.Contains(out, "a-long-enough-password") || strings.Contains(out, "app-secret") {
			t.Errorf("%s: a secret is printed:\n%s", step.name, out)
		}
		hooks := pd.Webhooks()
		if len(hooks) != 1 || hooks[0].SubscriptionURL != pdURL || hooks[0].HTTPAuthPass != "a-long-enough-password" {
			t.Fatalf("%s: Pipedrive webhooks %+v", step.name, hooks)
		}
		if (hooks[0].ID == firstID) != step.same {
			t.Errorf("%s: webhook %d after %d, want the same: %v", step.name, hooks[0].ID, firstID, step.same)
		}
		firstID = hooks[0].ID
	}
	if len(emu.Webhooks()) != 0 {
		t.Errorf("a workspace subscription was made without webhooks.publicURL: %+v", emu.Webhooks())
	}
}

// validate says when a connector's webhooks cannot arrive.
func TestValidateNotesConnectorWebhooks(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	hs := hubspotemu.NewServer(hubspotemu.Options{})
	t.Cleanup(hs.Close)
	for _, tc := range []struct {
		name   string
		listen string
		want   string
	}{
		{"listening", "127.0.0.1:0", "change webhooks are taken at /webhooks/connectors/hs"},
		{"no listener", "", "webhooks.listen is not: the change webhooks cannot arrive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := configfile.File{
				Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: "emulator-key"},
				State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
				Webhooks:  configfile.Webhooks{Listen: tc.listen},
				Connectors: []configfile.Connector{{Name: "hs", Type: "hubspot", Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL,
					"webhooks": map[string]any{"clientSecret": "app-secret", "url": "https://syncd.example.com/webhooks/connectors/hs"}},
					Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{"firstName": configfile.From("firstname")}}}},
			}
			cfg := filepath.Join(dir, "syncd.yaml")
			if err := f.Write(cfg); err != nil {
				t.Fatal(err)
			}
			_, errOut, err := runMain(t, "validate", "--config", cfg)
			if err != nil {
				t.Fatalf("validate: %v\n%s", err, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("validate's notes lack %q:\n%s", tc.want, errOut)
			}
		})
	}
}
