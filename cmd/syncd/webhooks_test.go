package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// webhookConfig writes a configuration on the emulator with a CSV
// connector and returns its path and the state path; secretGrace, when
// set, is webhooks.secretGrace.
func webhookConfig(t *testing.T, emuURL, publicURL, secretGrace string) (cfgPath, statePath string) {
	t.Helper()
	dir := t.TempDir()
	statePath = filepath.Join(dir, "syncd.db")
	csv := filepath.Join(dir, "c.csv")
	if err := os.WriteFile(csv, []byte("id,first_name\n1,Ann\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emuURL, APIKey: "emulator-key"},
		State:     configfile.State{Path: statePath},
		Webhooks:  configfile.Webhooks{PublicURL: publicURL, SecretGrace: secretGrace},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Settings: map[string]any{"path": csv},
			Mapping: configfile.Mapping{Fields: map[string]configfile.Field{"firstName": configfile.From("first_name")}}}},
	}
	cfgPath = filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfgPath); err != nil {
		t.Fatal(err)
	}
	return cfgPath, statePath
}

func readSecrets(t *testing.T, path string) (state.WebhookSecret, []state.WebhookSecret) {
	t.Helper()
	st, err := state.Open(path, state.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cur, prev, err := st.Webhooks.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	return cur, prev
}

func TestWebhooksRegisterRotateList(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	defer emu.Close()
	const public = "https://syncd.example.com/webhooks/workspace"
	cfg, statePath := webhookConfig(t, emu.URL, public, "2h")

	out, _, err := runMain(t, "webhooks", "register", "--config", cfg)
	if err != nil || !strings.Contains(out, "created") {
		t.Fatalf("register: %q %v", out, err)
	}
	whs := emu.Webhooks()
	if len(whs) != 1 || whs[0].URL != public || whs[0].Status != "enabled" || strings.Join(whs[0].Events, ",") != "contact.updated,contact.deleted" {
		t.Fatalf("webhooks after register: %+v", whs)
	}
	first, _ := readSecrets(t, statePath)
	if first.WebhookID != whs[0].ID || !strings.HasPrefix(first.Secret, signature.SecretPrefix) {
		t.Fatalf("stored secret of webhook %q", first.WebhookID)
	}
	if strings.Contains(out, first.Secret) {
		t.Fatal("register printed the secret")
	}

	// Again: nothing new.
	before := emu.Stats().Requests["POST /webhooks"]
	out, _, err = runMain(t, "webhooks", "register", "--config", cfg)
	if err != nil || !strings.Contains(out, "unchanged") || emu.Stats().Requests["POST /webhooks"] != before || len(emu.Webhooks()) != 1 {
		t.Fatalf("second register: %q %v, webhooks %d", out, err, len(emu.Webhooks()))
	}

	// Disabled by hand: register enables it again.
	if _, err := (&emuAPI{t, emu.URL}).disable(whs[0].ID); err != nil {
		t.Fatal(err)
	}
	out, _, err = runMain(t, "webhooks", "register", "--config", cfg)
	if err != nil || !strings.Contains(out, "updated") || emu.Webhooks()[0].Status != "enabled" {
		t.Fatalf("register of a disabled subscription: %q %v", out, err)
	}

	// Rotate: the new secret is current, the old one expires after 2h.
	start := time.Now()
	out, _, err = runMain(t, "webhooks", "rotate", "--config", cfg)
	if err != nil || !strings.Contains(out, "new secret stored") {
		t.Fatalf("rotate: %q %v", out, err)
	}
	cur, prev := readSecrets(t, statePath)
	if cur.Secret == first.Secret || len(prev) != 1 || prev[0].Secret != first.Secret {
		t.Fatalf("after rotate: current is the old one, or the old one is gone (%d previous)", len(prev))
	}
	if exp := prev[0].ExpiresAt.Sub(start); exp < 2*time.Hour-time.Minute || exp > 2*time.Hour+time.Minute {
		t.Fatalf("old secret expires in %v, want 2h", exp)
	}
	// The new secret signs deliveries that verify.
	h, _ := signature.SignHeaders(cur.Secret, "m1", time.Now(), []byte("{}"))
	if err := (&signature.Verifier{Secrets: []string{cur.Secret}}).Verify(h, []byte("{}")); err != nil {
		t.Fatal(err)
	}

	out, _, err = runMain(t, "webhooks", "list", "--config", cfg)
	if err != nil || !strings.Contains(out, whs[0].ID) || !strings.Contains(out, "syncd's") || !strings.Contains(out, "secrets in state: 2") {
		t.Fatalf("list: %q %v", out, err)
	}
	if strings.Contains(out, cur.Secret) || strings.Contains(out, first.Secret) {
		t.Fatal("list printed a secret")
	}
}

func TestWebhooksListShowsDeliveries(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1, RetryBase: time.Hour})
	defer emu.Close()
	// A subscription to an address nobody listens on: its delivery fails.
	cfg, _ := webhookConfig(t, emu.URL, "http://127.0.0.1:1/hook", "")
	if _, _, err := runMain(t, "webhooks", "register", "--config", cfg); err != nil {
		t.Fatal(err)
	}
	api := &emuAPI{t, emu.URL}
	api.appCreate("Del")
	deadline := time.Now().Add(5 * time.Second)
	for len(emu.Deliveries(emu.Webhooks()[0].ID)) == 0 || emu.Deliveries(emu.Webhooks()[0].ID)[0].Attempts == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no delivery attempt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	out, _, err := runMain(t, "webhooks", "list", "--config", cfg)
	if err != nil || !strings.Contains(out, "deliveries: 1") || !strings.Contains(out, "contact.updated") || !strings.Contains(out, "pending") {
		t.Fatalf("list: %q %v", out, err)
	}
}

func TestWebhooksUsageAndLockedState(t *testing.T) {
	if _, serr, err := runMain(t, "webhooks"); !errors.Is(err, ErrUsage) || !strings.Contains(serr, "register") {
		t.Fatalf("no subcommand: %v %q", err, serr)
	}
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	defer emu.Close()
	cfg, statePath := webhookConfig(t, emu.URL, "https://x.example.com/h", "")
	if _, _, err := runMain(t, "webhooks", "frob", "--config", cfg); !errors.Is(err, ErrUsage) {
		t.Fatalf("unknown subcommand: %v", err)
	}
	st, err := state.Open(statePath, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, _, err = runMain(t, "webhooks", "register", "--config", cfg)
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "stop it first") {
		t.Fatalf("register on a held state file: %v", err)
	}
	if len(emu.Webhooks()) != 0 {
		t.Fatal("register changed the workspace although it could not store the secret")
	}
}
