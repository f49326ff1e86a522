package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestDeadlettersListShowsFieldWarnings: a CSV row whose phone is "n/a"
// syncs without it, and `syncd deadletters list` (text and JSON) and
// `syncd status` report the field warning.
func TestDeadlettersListShowsFieldWarnings(t *testing.T) {
	e := &opsEnv{t: t, dir: t.TempDir()}
	e.emu = emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(e.emu.Close)
	csvPath := filepath.Join(e.dir, "contacts.csv")
	rows := "id,first_name,email,mobile\n1,Ada,ada@example.com,n/a\n2,Alan,alan@example.com,+1 415 555 0100\n3,Grace,grace@example.com,0049 30 1234567\n"
	if err := os.WriteFile(csvPath, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	e.state = filepath.Join(e.dir, "syncd.db")
	e.listen = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	e.cfg = filepath.Join(e.dir, "syncd.yaml")
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: e.emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: e.state},
		Admin:     configfile.Admin{Listen: e.listen, Token: "${SYNCD_ADMIN_TOKEN}"},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": csvPath},
			Mapping: configfile.Mapping{ExternalID: "id", Fields: map[string]configfile.Field{
				"firstName":           configfile.From("first_name"),
				"emails.work":         configfile.From("email"),
				"phoneNumbers.mobile": configfile.From("mobile"),
			}},
		}},
	}
	if err := f.Write(e.cfg); err != nil {
		t.Fatal(err)
	}
	e.must("run", "--once", "--config", e.cfg)
	if n := len(e.emu.Contacts()); n != 3 {
		t.Fatalf("%d contacts, want all 3 rows synced", n)
	}

	out := e.must("deadletters", "list", "--config", e.cfg)
	for _, want := range []string{"no dead letters", "2 field warnings", "fix it at the source", "phoneNumbers.mobile", `"n/a"`, `"0049 30 1234567"`,
		"not a phone number", "00 is not the international prefix in US"} {
		if !strings.Contains(out, want) {
			t.Errorf("deadletters list lacks %q:\n%s", want, out)
		}
	}
	out = e.must("deadletters", "list", "--config", e.cfg, "--json")
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			FieldWarning *admin.FieldWarning `json:"fieldWarning"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.FieldWarning == nil {
			t.Fatalf("--json line %q: %v, want a fieldWarning", line, err)
		}
		keys = append(keys, l.FieldWarning.Key+"="+l.FieldWarning.Value)
	}
	if got := strings.Join(keys, ","); got != "1=n/a,3=0049 30 1234567" {
		t.Fatalf("--json warnings %s, want records 1 and 3 with their values", got)
	}
	if out := e.must("status", "--config", e.cfg); !strings.Contains(out, "field warnings 2") {
		t.Errorf("status lacks the field warnings:\n%s", out)
	}
}
