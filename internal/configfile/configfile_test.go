package configfile_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/syncd-io/syncd/config"
	_ "github.com/syncd-io/syncd/connector/postgres" // the connector of these files
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
)

// A written file is a valid configuration holding what was set, and
// syncd's defaults for what was not.
func TestFileIsTheConfigurationItDescribes(t *testing.T) {
	dir := t.TempDir()
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: "http://127.0.0.1:9", APIKey: "${TEST_KEY}", RateLimit: 50},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks:  configfile.Webhooks{Listen: "127.0.0.1:0", Path: "/hooks"},
		Log:       configfile.Log{Level: "error"},
		Connectors: []configfile.Connector{{
			Name: "crm", Type: "postgres", Direction: policy.Both, OnWorkspaceDelete: policy.DeleteUnlink, Workers: 2,
			Settings: map[string]any{"dsn": "postgres://u@127.0.0.1:9/x", "table": "people"},
			Mapping:  configfile.People(),
		}},
	}
	f.Connectors[0].Mapping.ExternalID = "id"
	f.Connectors[0].Mapping.Fields["role"] = configfile.Field{From: "title", Direction: policy.ToCRM}
	path := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(k string) string {
		if k == "TEST_KEY" {
			return "k"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, f.YAML())
	}
	cc := cfg.Connectors[0]
	switch {
	case cfg.Workspace.APIKey != "k" || cfg.Workspace.RateLimit != 50 || cfg.Workspace.Burst != config.DefaultConfig().Workspace.Burst:
		t.Errorf("workspace %+v", cfg.Workspace)
	case cfg.Admin.Listen != "" || cfg.Webhooks.Path != "/hooks" || cfg.Log.Level != "error":
		t.Errorf("admin %+v, webhooks %+v, log %+v", cfg.Admin, cfg.Webhooks, cfg.Log)
	case cc.Direction != policy.Both || cc.OnWorkspaceDelete != policy.DeleteUnlink || cc.Conflict != policy.NewestWins || cc.Workers != 2 || cc.BatchSize != config.DefaultBatchSize:
		t.Errorf("connector %+v", cc)
	}
	want := mapping.Spec{ExternalID: "id", Fields: map[string]mapping.FieldSpec{
		"firstName":         {From: "first_name"},
		"lastName":          {From: "last_name"},
		"company":           {From: "company"},
		"emails.work":       {From: "email", Transform: []string{"email"}},
		"phoneNumbers.work": {From: "phone", Transform: []string{"e164"}, Region: "US"},
		"role":              {From: "title", Direction: "to-crm"},
	}}
	if !reflect.DeepEqual(cc.Mapping, want) {
		t.Errorf("mapping %+v, want %+v", cc.Mapping, want)
	}
}
