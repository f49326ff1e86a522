package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func TestValidateExample(t *testing.T) {
	out, serr, err := runMain(t, "validate", "--config", "../../config.example.yaml")
	if err != nil {
		t.Fatalf("config.example.yaml does not validate with no environment:\n%s%v", serr, err)
	}
	wantLines(t, "summary", out, "config.example.yaml is valid.", "connectors: ", "type csv", "schedule", "direction to-workspace", "firstName <- ", "apiKey set", "workspace custom field values: typed")
	if strings.Contains(out, "demo-key") {
		t.Errorf("the summary shows the API key:\n%s", out)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	out, serr, err := runMain(t, "validate", "--config", "testdata/five-problems.yaml")
	var ie *InvalidConfigError
	if !errors.As(err, &ie) || ie.ExitCode() != 1 || ie.Problems != 5 {
		t.Fatalf("err = %v, want an InvalidConfigError of 5 problems exiting 1\n%s", err, serr)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	wantLines(t, "stderr", serr,
		"testdata/five-problems.yaml: 5 problem(s):",
		"  workspace.apiKey: environment variable WORKSPACE_API_KEY is not set; ",
		"  connectors[crm].mapping.fields.emails.work.transfrom: unknown key; did you mean \"transform\"?",
		"  connectors[crm].source: source \"csv-import\" is reserved by the workspace (it starts with \"csv\"); use custom-<system>",
		"  connectors[crm].schedule: invalid schedule \"*/5 * * *\": ",
		"  connectors[crm].mapping.fields.firstName: unknown transform \"lowr\" (known: ",
	)
}

func TestValidateUsage(t *testing.T) {
	if _, _, err := runMain(t, "validate", "--config", "testdata/none.yaml"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: err = %v", err)
	}
	if _, _, err := runMain(t, "validate", "extra"); !errors.Is(err, ErrUsage) {
		t.Errorf("extra argument: err = %v, want ErrUsage", err)
	}
}

// The commented connector examples of config.example.yaml validate too,
// once uncommented, for every connector type this binary knows.
func TestValidateExampleBlocks(t *testing.T) {
	data, err := os.ReadFile("../../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	head := text[:strings.Index(text, "\nconnectors:\n")+1]
	blocks := map[string]string{}
	var name string
	for _, line := range strings.Split(text, "\n") {
		if _, rest, ok := strings.Cut(line, "# Example ("); ok {
			name, _, _ = strings.Cut(rest, ")")
			continue
		}
		if body, ok := strings.CutPrefix(line, "  # "); ok && name != "" {
			blocks[name] += "  " + body + "\n"
			continue
		}
		name = ""
	}
	// Every connector type but csv (the file's own connector) has one.
	for _, typ := range connector.Types() {
		if _, ok := blocks[typ]; !ok && typ != "csv" {
			t.Errorf("config.example.yaml has no example block for connector type %s", typ)
		}
	}
	checked := 0
	for typ, block := range blocks {
		if _, ok := connector.Lookup(typ); !ok {
			t.Logf("connector type %s is not registered in this binary: its example is not checked", typ)
			continue
		}
		getenv := func(k string) string {
			return map[string]string{"DATABASE_URL": "postgres://syncd@127.0.0.1:5432/crm", "HUBSPOT_TOKEN": "pat-na1-0000", "PIPEDRIVE_API_TOKEN": "0123abcd",
				"SF_CLIENT_ID": "3MVG9-consumer-key", "SF_CLIENT_SECRET": "consumer-secret",
				"MYSQL_DSN": "syncd:secret@tcp(127.0.0.1:3306)/shop"}[k]
		}
		doc := head + "connectors:\n" + block
		if _, err := config.ParseConfig([]byte(doc), getenv); err != nil {
			t.Errorf("example %s:\n%s\ndoes not validate:\n%v", typ, block, err)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no example checked")
	}
}

func TestValidateChecksMappedFieldsAgainstTheSource(t *testing.T) {
	dir := t.TempDir()
	csvPath := dir + "/crm.csv"
	if err := os.WriteFile(csvPath, []byte("id,first_name,email\n1,Ann,ann@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := `workspace:
  baseURL: http://127.0.0.1:1
  apiKey: k
connectors:
  - name: crm
    type: csv
    settings:
      path: ` + csvPath + `
    mapping:
      externalId: id
      sourceUrl: "https://crm.example.com/{{ .uid }}"
      fields:
        firstName: fname
        emails.work: email
`
	cfg := wantInvalid(t, yaml, 2,
		`connectors[crm].mapping.fields.firstName: unknown source field "fname"; the source has: id, first_name, email`,
		`connectors[crm].mapping.sourceUrl: unknown source field "uid"`,
	)
	// --offline checks the file alone.
	if _, serr, err := runMain(t, "validate", "--offline", "--config", cfg); err != nil {
		t.Errorf("--offline: %v\n%s", err, serr)
	}
}

// TestValidateActivitiesAConnectorCanLog: activities a connector type
// can log (HubSpot: calls and texts) validate, with a note saying what
// is logged; none is refused by the kinds check.
func TestValidateActivitiesAConnectorCanLog(t *testing.T) {
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	hs := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Connectors: []configfile.Connector{{Name: "hs", Type: "hubspot",
			Settings: map[string]any{"token": hs.Token(), "baseURL": hs.URL},
			Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{
				"firstName": configfile.From("firstname"), "phoneNumbers.mobile": configfile.From("phone")}},
			Activities: map[string]any{"log": []string{"calls", "messages", "summaries"}},
		}},
	}
	cfg := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	_, serr, err := runMain(t, "validate", "--config", cfg)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, serr)
	}
	wantLines(t, "stderr", serr, "note: connectors[hs]: activities: logs calls, messages, summaries on the linked records (this type can log calls and messages")
}
