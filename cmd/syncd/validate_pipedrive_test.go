package main

import (
	"os"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

// TestValidateShowsPipedriveCustomFieldNames: validate lists each custom
// field's name next to its 40-character key, says which mapping path
// uses it, and names them in the list of a mapped field it cannot find.
func TestValidateShowsPipedriveCustomFieldNames(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{CustomFields: []pipedriveemu.CustomField{
		{Name: "Tier", Type: "enum", Options: []string{"Gold", "Silver"}}, {Name: "Lead score", Type: "double"},
	}})
	t.Cleanup(srv.Close)
	tier, score := srv.CustomFields()[0].Key, srv.CustomFields()[1].Key
	if len(tier) != 40 {
		t.Fatalf("custom field key %q is not 40 characters", tier)
	}
	write := func(mapped string) string {
		cfg := t.TempDir() + "/syncd.yaml"
		yaml := `workspace:
  baseURL: http://127.0.0.1:1
  apiKey: k
connectors:
  - name: pd
    type: pipedrive
    source: custom-pipedrive
    direction: both
    settings:
      apiToken: ` + srv.Token() + `
      baseURL: ` + srv.URL + `
    mapping:
      fields:
        firstName: first_name
        emails.work: emails.work
        custom.tier: custom_fields.` + mapped + `
`
		if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	out, serr, err := runMain(t, "validate", "--config", write(tier))
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, serr)
	}
	wantLines(t, "stdout", out,
		"custom_fields."+tier+": Tier <- mapping.fields.custom.tier",
		"custom_fields."+score+": Lead score\n",
	)
	if strings.Contains(out+serr, srv.Token()) {
		t.Error("validate printed the API token")
	}

	_, serr, err = runMain(t, "validate", "--config", write("0000000000000000000000000000000000000000"))
	if err == nil || !strings.Contains(serr, "custom_fields."+tier+" (Tier)") {
		t.Errorf("an unknown key: err %v, stderr lacks the names of the keys:\n%s", err, serr)
	}
}
