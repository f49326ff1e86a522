// Package config reads syncd's YAML configuration: what workspace to talk
// to, where to keep state, how to receive webhooks, and which connectors
// to run with which mapping.
//
// ParseConfig applies defaults, expands ${VAR} and ${VAR:-default} from
// the environment inside scalar values (after parsing, so a secret with
// YAML-special characters cannot break the document), decodes strictly
// (an unknown key anywhere, connector settings included, is a problem
// naming its full path) and validates. Every problem is reported at once
// in a *ValidationError, each with its path and a hint. Secrets (the API
// key, the admin token, connector settings such as token, password or
// dsn) are never printed: not in errors, not in Redacted.
package config

import (
	"fmt"
	"os"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// Defaults.
const (
	DefaultStatePath           = "./syncd.db"
	DefaultWebhooksPath        = "/webhooks/workspace"
	DefaultSecretGrace         = 24 * time.Hour
	DefaultMaxBodyBytes        = 1 << 20
	DefaultAdminListen         = "127.0.0.1:8081"
	DefaultLogLevel            = "info"
	DefaultLogFormat           = "text"
	DefaultSchedule            = "@every 5m"
	DefaultSourcePrefix        = "custom-"
	DefaultBatchSize           = 100
	DefaultWorkers             = 4
	DefaultMassDeleteThreshold = 0.10
	DefaultMassRekeyThreshold  = 0.10
)

// Match keys (a connector's match list); the connector's policies are
// package policy's types.
const (
	MatchPhone = "phone"
	MatchEmail = "email"
)

// Config is the whole configuration file.
type Config struct {
	Workspace  WorkspaceConfig   `yaml:"workspace"`
	State      StateConfig       `yaml:"state"`
	Webhooks   WebhooksConfig    `yaml:"webhooks"`
	Admin      AdminConfig       `yaml:"admin"`
	Log        LogConfig         `yaml:"log"`
	Connectors []ConnectorConfig `yaml:"connectors"`
}

// WorkspaceConfig is how to reach the workspace's API.
type WorkspaceConfig struct {
	BaseURL       string  `yaml:"baseURL"`
	APIKey        string  `yaml:"apiKey"` // secret
	VersionHeader string  `yaml:"versionHeader"`
	Version       string  `yaml:"version"`
	RateLimit     float64 `yaml:"rateLimit"` // requests per second, shared by every connector
	Burst         int     `yaml:"burst"`
	// CustomFieldValues is the form custom field values are written in:
	// typed (by the field's type, the published document's form) or
	// arrays (every value an array of strings).
	CustomFieldValues string `yaml:"customFieldValues"`
}

// StateConfig is where syncd keeps its state.
type StateConfig struct {
	Path string `yaml:"path"`
}

// WebhooksConfig is the receiver of the workspace's webhooks.
type WebhooksConfig struct {
	// Listen is the receiver's address; empty runs no receiver.
	Listen string `yaml:"listen"`
	Path   string `yaml:"path"`
	// PublicURL is the address the workspace delivers to.
	PublicURL string `yaml:"publicURL"`
	// AutoRegister makes `syncd run` ensure the subscription at start-up.
	AutoRegister bool `yaml:"autoRegister"`
	// SecretGrace is how long a rotated-out signing secret stays valid.
	SecretGrace time.Duration `yaml:"secretGrace"`
	// LegacySignatures also accepts the older openphone-signature scheme.
	LegacySignatures bool  `yaml:"legacySignatures"`
	MaxBodyBytes     int64 `yaml:"maxBodyBytes"`
}

// AdminConfig is the admin API.
type AdminConfig struct {
	// Listen is the admin API's address; empty runs none.
	Listen string `yaml:"listen"`
	// Token, when set, is the bearer token state-changing calls need.
	Token string `yaml:"token"` // secret
}

// LogConfig is the logger's.
type LogConfig struct {
	Level  string `yaml:"level"`  // a logrus level
	Format string `yaml:"format"` // text or json
}

// ConnectorConfig is one connector.
type ConnectorConfig struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"`
	// Source is the workspace source of the contacts this connector
	// creates; default "custom-" + Name.
	Source   string `yaml:"source"`
	Schedule string `yaml:"schedule"` // robfig/cron/v3 standard spec or descriptor

	Direction         policy.Direction `yaml:"direction"`         // to-workspace, to-crm, both
	Conflict          policy.Conflict  `yaml:"conflict"`          // newest-wins, workspace-wins, crm-wins
	OnSourceDelete    policy.Delete    `yaml:"onSourceDelete"`    // ignore, unlink, delete
	OnWorkspaceDelete policy.Delete    `yaml:"onWorkspaceDelete"` // ignore, unlink, delete
	OnWorkspaceCreate policy.Create    `yaml:"onWorkspaceCreate"` // ignore, create
	// EditAfterDelete settles an edit made on one side more than
	// policy.RaceWindow after a delete on the other: edit-wins, delete-wins.
	EditAfterDelete policy.EditAfterDelete `yaml:"editAfterDelete"`

	Match       []string           `yaml:"match"`       // subset of phone, email
	OnMatch     policy.OnMatch     `yaml:"onMatch"`     // adopt, link, create
	OnAmbiguous policy.OnAmbiguous `yaml:"onAmbiguous"` // hold, create

	BatchSize           int     `yaml:"batchSize"` // records per reconcile batch
	Workers             int     `yaml:"workers"`
	MassDeleteThreshold float64 `yaml:"massDeleteThreshold"` // share of linked contacts one run may delete
	MassRekeyThreshold  float64 `yaml:"massRekeyThreshold"`  // share of linked contacts a pass may create while as many linked records vanish

	// Settings is the connector type's own settings, decoded strictly into
	// the value its NewSettings returns.
	Settings connector.Settings `yaml:"settings"`
	Mapping  mapping.Spec       `yaml:"mapping"`
	// Activities logs the workspace's calls and texts on the records.
	Activities ActivitiesConfig `yaml:"activities"`
}

// DefaultConfig returns a configuration holding every default.
func DefaultConfig() Config {
	return Config{
		Workspace: WorkspaceConfig{
			VersionHeader:     workspace.DefaultVersionHeader,
			Version:           workspace.DefaultVersion,
			RateLimit:         workspace.DefaultRateLimit,
			Burst:             workspace.DefaultBurst,
			CustomFieldValues: workspace.ValuesTyped,
		},
		State:    StateConfig{Path: DefaultStatePath},
		Webhooks: WebhooksConfig{Path: DefaultWebhooksPath, SecretGrace: DefaultSecretGrace, MaxBodyBytes: DefaultMaxBodyBytes},
		Admin:    AdminConfig{Listen: DefaultAdminListen},
		Log:      LogConfig{Level: DefaultLogLevel, Format: DefaultLogFormat},
	}
}

// DefaultConnector returns a connector holding every default but the
// source, which follows the name (see ApplyDefaults).
func DefaultConnector() ConnectorConfig {
	return ConnectorConfig{
		Schedule:            DefaultSchedule,
		Direction:           policy.ToWorkspace,
		Conflict:            policy.NewestWins,
		OnSourceDelete:      policy.DeleteIgnore,
		OnWorkspaceDelete:   policy.DeleteIgnore,
		OnWorkspaceCreate:   policy.CreateIgnore,
		EditAfterDelete:     policy.EditWins,
		OnMatch:             policy.MatchAdopt,
		OnAmbiguous:         policy.AmbiguousHold,
		BatchSize:           DefaultBatchSize,
		Workers:             DefaultWorkers,
		MassDeleteThreshold: DefaultMassDeleteThreshold,
		MassRekeyThreshold:  DefaultMassRekeyThreshold,
		Activities:          ActivitiesConfig{UnknownNumbers: policy.UnknownSkip},
	}
}

// ApplyDefaults fills what depends on other values: a connector's source.
func (c *Config) ApplyDefaults() {
	for i := range c.Connectors {
		if c.Connectors[i].Source == "" && c.Connectors[i].Name != "" {
			c.Connectors[i].Source = DefaultSourcePrefix + c.Connectors[i].Name
		}
	}
}

// ReadsWorkspace reports whether the connector acts on changes made in
// the workspace: it writes back, or has a policy for contacts created or
// deleted there.
func (cc *ConnectorConfig) ReadsWorkspace() bool {
	return cc.Direction.WritesBack() ||
		(cc.OnWorkspaceCreate != "" && cc.OnWorkspaceCreate != policy.CreateIgnore) ||
		(cc.OnWorkspaceDelete != "" && cc.OnWorkspaceDelete != policy.DeleteIgnore)
}

// Load reads and parses the file at path.
func Load(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := ParseConfig(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}
