package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/mapping"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	data, err := os.ReadFile("testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(data, env("WORKSPACE_API_KEY", "k"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Workspace.BaseURL = "https://api.example.com"
	want.Workspace.APIKey = "k"
	cc := DefaultConnector()
	cc.Name, cc.Type, cc.Source = "crm", "filetest", "custom-crm"
	cc.Settings = &fileSettings{Path: "./contacts.csv", Delimiter: ","}
	cc.Mapping = mapping.Spec{ExternalID: "id", Fields: map[string]mapping.FieldSpec{"firstName": {From: "first_name"}}}
	want.Connectors = []ConnectorConfig{cc}
	if !reflect.DeepEqual(*c, want) {
		t.Fatalf("got  %+v\nwant %+v", *c, want)
	}
	// The documented values of the defaults.
	checks := []struct {
		name      string
		got, want any
	}{
		{"state.path", c.State.Path, "./syncd.db"},
		{"webhooks.secretGrace", c.Webhooks.SecretGrace, 24 * time.Hour},
		{"webhooks.maxBodyBytes", c.Webhooks.MaxBodyBytes, int64(1 << 20)},
		{"webhooks.path", c.Webhooks.Path, "/webhooks/workspace"},
		{"webhooks.listen", c.Webhooks.Listen, ""},
		{"admin.listen", c.Admin.Listen, "127.0.0.1:8081"},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, "text"},
		{"workspace.versionHeader", c.Workspace.VersionHeader, "Service-Api-Version"},
		{"workspace.rateLimit", c.Workspace.RateLimit, 10.0},
		{"workspace.customFieldValues", c.Workspace.CustomFieldValues, "typed"},
		{"schedule", cc.Schedule, "@every 5m"},
		{"direction", cc.Direction.String(), "to-workspace"},
		{"conflict", cc.Conflict.String(), "newest-wins"},
		{"onSourceDelete", cc.OnSourceDelete.String(), "ignore"},
		{"onWorkspaceDelete", cc.OnWorkspaceDelete.String(), "ignore"},
		{"onWorkspaceCreate", cc.OnWorkspaceCreate.String(), "ignore"},
		{"match", len(cc.Match), 0},
		{"onMatch", cc.OnMatch.String(), "adopt"},
		{"onAmbiguous", cc.OnAmbiguous.String(), "hold"},
		{"batchSize", cc.BatchSize, 100},
		{"workers", cc.Workers, 4},
		{"massDeleteThreshold", cc.MassDeleteThreshold, 0.10},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestExplicitValuesOverrideDefaults(t *testing.T) {
	doc := `
workspace: {baseURL: "http://127.0.0.1:9000", apiKey: k}
admin: {listen: ""}
state: {path: ~}
connectors:
  - name: db
    type: dbtest
    massDeleteThreshold: 1
    settings: {table: t, batchSize: 7}
    mapping: {fields: {firstName: n}}
`
	c, err := ParseConfig([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Listen != "" {
		t.Errorf("admin.listen = %q, want \"\" (off)", c.Admin.Listen)
	}
	if c.State.Path != DefaultStatePath {
		t.Errorf("a null state.path = %q, want the default", c.State.Path)
	}
	if c.Connectors[0].MassDeleteThreshold != 1 {
		t.Errorf("massDeleteThreshold = %v", c.Connectors[0].MassDeleteThreshold)
	}
	if s := c.Connectors[0].Settings.(*dbSettings); s.BatchSize != 7 || s.Table != "t" {
		t.Errorf("settings = %+v, want batchSize 7 over the type's default", s)
	}
}

func TestEnvExpansion(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		env     []string
		want    any
		problem string
	}{
		{name: "whole value", value: "${A}", env: []string{"A", "x"}, want: "x"},
		{name: "inside text", value: "pre-${A}-${B}-post", env: []string{"A", "1", "B", "2"}, want: "pre-1-2-post"},
		{name: "default when unset", value: "${A:-dflt}", want: "dflt"},
		{name: "default when empty", value: "${A:-dflt}", env: []string{"A", ""}, want: "dflt"},
		{name: "empty default", value: "${A:-}", want: ""},
		{name: "value beats default", value: "${A:-dflt}", env: []string{"A", "v"}, want: "v"},
		{name: "escaped", value: "$${A}", env: []string{"A", "v"}, want: "${A}"},
		{name: "lone dollar kept", value: "pa$$w$rd", want: "pa$$w$rd"},
		{name: "YAML specials stay one value", value: "${A}", env: []string{"A", "a: b # c\n- d"}, want: "a: b # c\n- d"},
		{name: "expanded null stays a string", value: "${A}", env: []string{"A", "null"}, want: "null"},
		{name: "unset", value: "${MISSING}", problem: "environment variable MISSING is not set"},
		{name: "bad name", value: "${1A}", problem: "invalid environment reference"},
		{name: "unterminated", value: "${A", problem: "unterminated ${ reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps problems
			got, _ := expandString(tt.value, "x.y", env(tt.env...), &ps)
			if tt.problem != "" {
				if len(ps) != 1 || ps[0].Path != "x.y" || ps[0].Message != tt.problem || ps[0].Hint == "" {
					t.Fatalf("problems = %v, want %q at x.y", ps, tt.problem)
				}
				return
			}
			if len(ps) != 0 || got != tt.want {
				t.Fatalf("expand(%q) = %q, %v; want %q", tt.value, got, ps, tt.want)
			}
		})
	}
}

func TestEnvExpansionTypes(t *testing.T) {
	doc := `
workspace:
  baseURL: ${URL}
  apiKey: "${KEY}"
  rateLimit: ${RATE}
  burst: ${BURST:-3}
webhooks:
  secretGrace: ${GRACE}
  autoRegister: ${AUTO}
connectors: [{name: c, type: filetest, settings: {path: "${P}"}, mapping: {fields: {firstName: n}}}]
`
	c, err := ParseConfig([]byte(doc), env("URL", "https://x.example", "KEY", "123", "RATE", "2.5", "GRACE", "90m", "AUTO", "false", "P", "a b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workspace
	if w.APIKey != "123" || w.RateLimit != 2.5 || w.Burst != 3 || c.Webhooks.SecretGrace != 90*time.Minute || c.Webhooks.AutoRegister {
		t.Fatalf("decoded %+v %+v", w, c.Webhooks)
	}
	if p := c.Connectors[0].Settings.(*fileSettings).Path; p != "a b.csv" {
		t.Fatalf("settings path = %q", p)
	}
}

// Secrets from the environment or the file never show in problems or in
// the summary, even when they sit where they do not belong.
func TestSecretsNeverPrinted(t *testing.T) {
	const secret = "S3CRET-VALUE-42"
	doc := `
workspace:
  baseURL: "https://user:` + secret + `@api.example.com/?key=` + secret + `"
  apiKey: ${KEY}
  rateLimit: ${KEY}
  burst: ${KEY}
webhooks:
  secretGrace: ${KEY}
  publicURL: "ftp://` + secret + `@x"
admin: {listen: "0.0.0.0:1", token: "` + secret + `"}
connectors:
  - name: db
    type: dbtest
    direction: ${KEY}
    settings:
      dsn: "postgres://u:` + secret + `@db/x"
      token: ${KEY}
      batchSize: ${KEY}
      tokn: ` + secret + `
    mapping: {fields: {firstName: n}}
`
	getenv := env("KEY", secret)
	_, err := ParseConfig([]byte(doc), getenv)
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) < 5 {
		t.Fatalf("err = %v, want several problems", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("a secret shows in the problems:\n%v", err)
	}
	if !strings.Contains(err.Error(), `connectors[db].direction: unknown value "${KEY}"`) {
		t.Errorf("an expanded value is not named by its variable:\n%v", err)
	}

	// A valid configuration's summary shows no secret either.
	ok := `
workspace: {baseURL: "https://api.example.com", apiKey: "${KEY}"}
admin: {token: "` + secret + `"}
webhooks: {listen: ":8080", publicURL: "https://h.example/p?sig=` + secret + `"}
connectors:
  - name: db
    type: dbtest
    settings: {dsn: "postgres://u:` + secret + `@db/x", token: "${KEY}", table: t}
    mapping: {fields: {firstName: n}}
`
	c, err := ParseConfig([]byte(ok), getenv)
	if err != nil {
		t.Fatal(err)
	}
	sum := c.Redacted()
	if strings.Contains(sum, secret) {
		t.Fatalf("a secret shows in the summary:\n%s", sum)
	}
	for _, want := range []string{"apiKey set", "token set", "dsn=(set)", "token=(set)", `table="t"`, "firstName <- n"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"apiKey": true, "token": true, "accessToken": true, "password": true, "dsn": true, "clientSecret": true,
		"path": false, "table": false, "keyColumn": false, "tokenColumn": false,
	} {
		if IsSecretKey(key) != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", key, !want, want)
		}
	}
}

func TestLoad(t *testing.T) {
	if _, err := Load("testdata/valid-minimal.yaml", env("WORKSPACE_API_KEY", "k")); err != nil {
		t.Fatal(err)
	}
	_, err := Load("testdata/five-at-once.yaml", env())
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 5 || !strings.HasPrefix(err.Error(), "config testdata/five-at-once.yaml: ") {
		t.Fatalf("err = %v, want the file named and five problems", err)
	}
	if _, err := Load("testdata/no-such-file.yaml", env()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
}

func TestValidateProgrammaticConfig(t *testing.T) {
	c := DefaultConfig()
	c.Workspace.BaseURL, c.Workspace.APIKey = "https://api.example.com", "k"
	cc := DefaultConnector()
	cc.Name, cc.Type, cc.Source = "db", "dbtest", "custom-db"
	cc.Mapping = mapping.Spec{Fields: map[string]mapping.FieldSpec{"firstName": {From: "n"}}}
	c.Connectors = []ConnectorConfig{cc}
	// Settings left nil: the type's defaults are validated.
	err := c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Path != "connectors[db].settings.table" {
		t.Fatalf("err = %v, want only the settings' table required", err)
	}
	c.Connectors[0].Settings = &dbSettings{Table: "t"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
