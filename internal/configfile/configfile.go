// Package configfile writes syncd configuration files for the benchmarks
// (`syncd bench`, which ships it) and the tests: a File value rendered as
// YAML, so that no caller keeps its own copy of the file's layout. Zero values are left out, so that
// syncd's defaults apply, but for admin.listen: written as "" (no admin
// API) unless set.
package configfile

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/policy"
)

// File is a configuration file.
type File struct {
	Workspace  Workspace   `yaml:"workspace"`
	State      State       `yaml:"state"`
	Webhooks   Webhooks    `yaml:"webhooks,omitempty"`
	Admin      Admin       `yaml:"admin"`
	Log        Log         `yaml:"log,omitempty"`
	Connectors []Connector `yaml:"connectors"`
}

// Workspace is the workspace section.
type Workspace struct {
	BaseURL   string  `yaml:"baseURL"`
	APIKey    string  `yaml:"apiKey"`
	RateLimit float64 `yaml:"rateLimit,omitempty"`
	Burst     int     `yaml:"burst,omitempty"`
	// CustomFieldValues is the form of custom field values (typed or
	// arrays); empty means syncd's default.
	CustomFieldValues string `yaml:"customFieldValues,omitempty"`
}

// State is the state section.
type State struct {
	Path string `yaml:"path"`
}

// Webhooks is the webhook receiver's section.
type Webhooks struct {
	Listen       string `yaml:"listen,omitempty"`
	Path         string `yaml:"path,omitempty"`
	PublicURL    string `yaml:"publicURL,omitempty"`
	AutoRegister bool   `yaml:"autoRegister,omitempty"`
	SecretGrace  string `yaml:"secretGrace,omitempty"` // a duration, such as 2h
}

// Admin is the admin API's section; an empty Listen runs none.
type Admin struct {
	Listen string `yaml:"listen"`
	Token  string `yaml:"token,omitempty"`
}

// Log is the log section.
type Log struct {
	Level  string `yaml:"level,omitempty"`
	Format string `yaml:"format,omitempty"`
}

// Connector is one connector.
type Connector struct {
	Name                string             `yaml:"name"`
	Type                string             `yaml:"type"`
	Source              string             `yaml:"source,omitempty"`
	Direction           policy.Direction   `yaml:"direction,omitempty"`
	Schedule            string             `yaml:"schedule,omitempty"`
	Conflict            policy.Conflict    `yaml:"conflict,omitempty"`
	OnSourceDelete      policy.Delete      `yaml:"onSourceDelete,omitempty"`
	OnWorkspaceCreate   policy.Create      `yaml:"onWorkspaceCreate,omitempty"`
	OnWorkspaceDelete   policy.Delete      `yaml:"onWorkspaceDelete,omitempty"`
	Match               []string           `yaml:"match,flow,omitempty"`
	OnMatch             policy.OnMatch     `yaml:"onMatch,omitempty"`
	OnAmbiguous         policy.OnAmbiguous `yaml:"onAmbiguous,omitempty"`
	MassDeleteThreshold float64            `yaml:"massDeleteThreshold,omitempty"`
	Workers             int                `yaml:"workers,omitempty"`
	BatchSize           int                `yaml:"batchSize,omitempty"`
	// Settings are the connector type's settings.
	Settings map[string]any `yaml:"settings,omitempty"`
	Mapping  Mapping        `yaml:"mapping"`
	// Activities is the connector's activities block (calls and texts).
	Activities map[string]any `yaml:"activities,omitempty"`
}

// Mapping is a connector's mapping.
type Mapping struct {
	ExternalID string           `yaml:"externalId,omitempty"`
	Fields     map[string]Field `yaml:"fields"`
}

// Field is a mapped field; one with only From is written as the
// shorthand (firstName: first_name).
type Field struct {
	From      string           `yaml:"from"`
	Direction policy.Direction `yaml:"direction,omitempty"`
	Transform []string         `yaml:"transform,flow,omitempty"`
	Region    string           `yaml:"region,omitempty"`
}

// MarshalYAML writes the shorthand when it says it all.
func (f Field) MarshalYAML() (any, error) {
	if f.Direction == "" && len(f.Transform) == 0 && f.Region == "" {
		return f.From, nil
	}
	type plain Field // without this method
	return plain(f), nil
}

// From is the field mapped from a record field, in the connector's
// direction.
func From(recordField string) Field { return Field{From: recordField} }

// People maps the tests' and the benchmarks' rows of people (first_name,
// last_name, company, email, and a US phone) to the workspace, in the
// connector's direction.
func People() Mapping {
	return Mapping{Fields: map[string]Field{
		"firstName":         From("first_name"),
		"lastName":          From("last_name"),
		"company":           From("company"),
		"emails.work":       {From: "email", Transform: []string{"email"}},
		"phoneNumbers.work": {From: "phone", Transform: []string{"e164"}, Region: "US"},
	}}
}

// Names maps rows keyed by their id column, with first_name, last_name
// and email, to the workspace, in the connector's direction.
func Names() Mapping {
	return Mapping{ExternalID: "id", Fields: map[string]Field{
		"firstName":   From("first_name"),
		"lastName":    From("last_name"),
		"emails.work": From("email"),
	}}
}

// YAML renders the file.
func (f File) YAML() []byte {
	b, err := yaml.Marshal(f)
	if err != nil {
		// Only plain values are marshalled: this cannot happen.
		panic(fmt.Sprintf("configfile: %v", err))
	}
	return b
}

// Write writes the file to path, readable by its owner only (it holds
// the API key).
func (f File) Write(path string) error {
	return os.WriteFile(path, f.YAML(), 0o600)
}
