package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// crmEmulator is `syncd emulator --crm` run in-process.
type crmEmulator struct {
	stdout, stderr capture.Buffer
	cancel         context.CancelFunc
	done           chan error
}

// startCRMEmulator runs `syncd emulator --crm` with args and waits until
// it says it listens.
func startCRMEmulator(t *testing.T, args ...string) *crmEmulator {
	t.Helper()
	e := &crmEmulator{done: make(chan error, 1)}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &e.stdout, Stderr: &e.stderr, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- m.Run(ctx, append([]string{"emulator", "--listen", "127.0.0.1:0"}, args...)) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.stderr.String(), "emulator listening") {
		select {
		case err := <-e.done:
			t.Fatalf("emulator --crm ended: %v\n%s", err, e.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("emulator --crm did not say it listens: %s", e.stderr.String())
		}
	}
	t.Cleanup(e.stop(t))
	return e
}

func (e *crmEmulator) stop(t *testing.T) func() {
	return func() {
		e.cancel()
		select {
		case err := <-e.done:
			if err != nil {
				t.Errorf("emulator --crm: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("emulator --crm did not stop")
		}
	}
}

// TestEmulatorCRMServesWhatSyncdSyncs runs each CRM's stand-in as a user
// would: the connectors: section it prints, beside a workspace emulator's,
// is a syncd.yaml that `syncd validate` accepts, and `syncd run --once`
// makes a workspace contact of every record it was seeded with (the
// sample people and the --records file).
func TestEmulatorCRMServesWhatSyncdSyncs(t *testing.T) {
	for _, crm := range crmNames {
		t.Run(crm, func(t *testing.T) {
			ws, err := emulator.Listen("127.0.0.1:0", emulator.Options{APIKey: "ws-key", Rate: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			e := startCRMEmulator(t, "--crm", crm, "--login-listen", "127.0.0.1:0", "--sample", "3",
				"--records", filepath.Join("testdata", "emulator-crm", crm+"-records.json"))
			printed := e.stdout.String()
			if !strings.Contains(printed, "with 4 records") {
				t.Errorf("printed %q, want it to count 3 sample people and 1 record of the file", printed)
			}
			dir := t.TempDir()
			cfg := filepath.Join(dir, "syncd.yaml")
			head := fmt.Sprintf("workspace:\n  baseURL: %s\n  apiKey: ws-key\nstate:\n  path: %s\nadmin:\n  listen: \"\"\n", ws.URL, filepath.Join(dir, "syncd.db"))
			if err := os.WriteFile(cfg, []byte(head+printed), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, errOut, err := runMain(t, "validate", "--config", cfg); err != nil {
				t.Fatalf("validate: %v\n%s%s\nconfig:\n%s", err, out, errOut, head+printed)
			}
			// Salesforce's reads end a settle before the clock (whole
			// seconds): a pass run at once may find nothing yet.
			want := map[string]bool{"Ada Lovelace": true, "Alan Turing": true, "Barbara Liskov": true, "Grace Hopper": true}
			deadline := time.Now().Add(20 * time.Second)
			for {
				if out, errOut, err := runMain(t, "run", "--once", "--config", cfg); err != nil {
					t.Fatalf("run --once: %v\n%s%s", err, out, errOut)
				}
				got := map[string]bool{}
				for _, c := range ws.Contacts() {
					if deref(c.Source) != "custom-"+crm {
						t.Errorf("contact %s has source %q", c.ID, deref(c.Source))
					}
					got[deref(c.DefaultFields.FirstName)+" "+deref(c.DefaultFields.LastName)] = true
				}
				if fmt.Sprint(got) == fmt.Sprint(want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("workspace contacts %v, want %v", got, want)
				}
			}
			for _, c := range ws.Contacts() {
				if deref(c.DefaultFields.FirstName) == "Grace" && (len(c.DefaultFields.Emails) != 1 || c.DefaultFields.Emails[0].Value != "grace.hopper@example.com") {
					t.Errorf("Grace Hopper's e-mail went through the mapping's transform to %+v", c.DefaultFields.Emails)
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestEmulatorCRMHubSpotWebhooks checks that the HubSpot stand-in sends
// its change webhooks to --webhook-url, signed with --webhook-secret as
// HubSpot signs them (v3), when a contact changes through its API.
func TestEmulatorCRMHubSpotWebhooks(t *testing.T) {
	got := make(chan error, 10)
	var target string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts := r.Header.Get("X-HubSpot-Request-Timestamp")
		if want := hubspot.SignV3("hook-secret", r.Method, target, body, ts); r.Header.Get("X-HubSpot-Signature-v3") != want {
			got <- fmt.Errorf("signature %q, want %q over %s", r.Header.Get("X-HubSpot-Signature-v3"), want, body)
		} else if !strings.Contains(string(body), `"contact.creation"`) {
			got <- fmt.Errorf("body %s, want a contact.creation event", body)
		} else {
			got <- nil
		}
	}))
	defer recv.Close()
	target = recv.URL + "/webhooks/connectors/hubspot"
	e := startCRMEmulator(t, "--crm", "hubspot", "--sample", "0", "--webhook-url", target, "--webhook-secret", "hook-secret")
	if !strings.Contains(e.stdout.String(), `webhooks: { url: "`+target+`", clientSecret: "hook-secret" }`) {
		t.Errorf("printed config has no webhooks settings: %s", e.stdout.String())
	}
	base := regexp.MustCompile(`baseURL: (\S+)`).FindStringSubmatch(e.stdout.String())
	if base == nil {
		t.Fatalf("no baseURL printed: %s", e.stdout.String())
	}
	req, _ := http.NewRequest("POST", base[1]+"/crm/v3/objects/contacts/batch/create", strings.NewReader(`{"inputs":[{"properties":{"email":"new@example.com"}}]}`))
	req.Header.Set("Authorization", "Bearer hubspotemu-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no webhook came")
	}
}

func TestEmulatorCRMFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown CRM", args: []string{"--crm", "zoho"}, wantErr: "hubspot, salesforce, pipedrive"},
		{name: "workspace flag with --crm", args: []string{"--crm", "hubspot", "--api-key", "k"}, wantErr: "--api-key is a flag of the workspace emulator"},
		{name: "CRM flag without --crm", args: []string{"--api-key", "k", "--records", "x.json"}, wantErr: "--records goes with --crm"},
		{name: "webhooks of a CRM told nothing", args: []string{"--crm", "pipedrive", "--webhook-url", "http://x/", "--webhook-secret", "s"}, wantErr: "only the HubSpot stand-in"},
		{name: "webhook URL without secret", args: []string{"--crm", "hubspot", "--webhook-url", "http://x/"}, wantErr: "go together"},
		{name: "missing records file", args: []string{"--crm", "salesforce", "--records", "testdata/emulator-crm/none.json"}, wantErr: "--records"},
		{name: "read-only HubSpot property", args: []string{"--crm", "hubspot", "--records", "testdata/emulator-crm/hubspot-read-only-property.json"}, wantErr: `"hs_object_id" is read-only`},
		{name: "records of another CRM's shape", args: []string{"--crm", "pipedrive", "--records", "testdata/emulator-crm/salesforce-records.json"}, wantErr: "unknown field"},
		{name: "Salesforce field the org lacks", args: []string{"--crm", "salesforce", "--login-listen", "127.0.0.1:0", "--records", "testdata/emulator-crm/hubspot-records.json"}, wantErr: `no field "properties"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runMain(t, append([]string{"emulator", "--listen", "127.0.0.1:0"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

// TestREADMECRMStandInConfig keeps the README's stand-in example true:
// `syncd validate` accepts it, and its connector is what `syncd emulator
// --crm hubspot` prints (at its default address).
func TestREADMECRMStandInConfig(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := strings.SplitN(string(readme), "### Try a mapping against a CRM stand-in", 2)
	if len(section) != 2 {
		t.Fatal("README.md has no section \"Try a mapping against a CRM stand-in\"")
	}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section[1])
	if block == nil {
		t.Fatal("the README's stand-in section has no yaml block")
	}
	cfg := filepath.Join(t.TempDir(), "syncd.yaml")
	if err := os.WriteFile(cfg, []byte(block[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runMain(t, "validate", "--offline", "--config", cfg); err != nil {
		t.Fatalf("validate --offline: %v\n%s%s", err, out, errOut)
	}
	e := startCRMEmulator(t, "--crm", "hubspot", "--sample", "0")
	printed := e.stdout.String()
	base := regexp.MustCompile(`baseURL: (\S+)`).FindStringSubmatch(printed)
	if base == nil {
		t.Fatalf("no baseURL printed: %s", printed)
	}
	_, connectors, _ := strings.Cut(strings.ReplaceAll(printed, base[1], "http://127.0.0.1:8090"), "\n")
	if !strings.Contains(block[1], connectors) {
		t.Errorf("the README's connector is not what the stand-in prints:\n%s\nREADME:\n%s", connectors, block[1])
	}
}
