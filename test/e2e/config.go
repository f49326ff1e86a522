package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// Connector and Source name the connector of the configurations made
// here and the workspace source of its contacts.
const (
	Connector = "db"
	Source    = "custom-db"
)

// DSN is the test server's address with application_name=syncd, so that
// the table's audit tells syncd's writes from the test's.
func DSN() string {
	u := pgtest.URL()
	switch {
	case !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://"):
		return u + " application_name=syncd" // key=value form
	case strings.Contains(u, "?"):
		return u + "&application_name=syncd"
	}
	return u + "?application_name=syncd"
}

// ConfigOptions describe a configuration.
type ConfigOptions struct {
	EmulatorURL string
	APIKey      string // default emulator.DefaultAPIKey
	// Table is the table's name; Type and DSN its connector type and
	// syncd's address of its database (Table's Dialect.Type and DSN),
	// default postgres and DSN().
	Table     string
	Type, DSN string
	StatePath string
	// Listen is the webhook receiver's address; "" runs none.
	Listen string
	// PublicURL, when set, is where the workspace delivers, and syncd
	// registers its subscription itself (webhooks.autoRegister).
	PublicURL string
	// Schedule of the connector's passes (default: config's).
	Schedule string
	// RateLimit and Burst of the workspace client (default 200 and 20).
	RateLimit float64
	Burst     int
	LogLevel  string // default error
	// Direction (default both) and the policies of a two-way sync:
	// creates and deletes follow each side.
	Direction policy.Direction
	// BatchSize of the table's reads (default 25) and Workers (default 4).
	BatchSize int
	Workers   int
	// Settings are more connector settings (changes: logical, slot...).
	// The table polls (changes: poll) unless they set changes: a test that
	// streams from PostgreSQL sets a slot of its own too, and drops it at
	// its end.
	Settings map[string]any
}

// WriteConfig writes the configuration to dir/syncd.yaml and returns
// its path. The connector syncs the table both ways: creates and deletes
// on either side follow on the other (soft deletes in the table), newest
// change wins a conflict, and the mass-delete guard is off. Custom field
// values are written in the form the tests' emulators take
// (emulator.TestCustomFieldValues).
func WriteConfig(t testing.TB, dir string, o ConfigOptions) string {
	t.Helper()
	if o.APIKey == "" {
		o.APIKey = "emulator-key"
	}
	if o.RateLimit == 0 {
		o.RateLimit = 200
	}
	if o.Burst == 0 {
		o.Burst = 20
	}
	if o.LogLevel == "" {
		o.LogLevel = "error"
	}
	if o.Direction == "" {
		o.Direction = policy.Both
	}
	if o.BatchSize == 0 {
		o.BatchSize = 25
	}
	if o.Workers == 0 {
		o.Workers = 4
	}
	if o.Type == "" {
		o.Type = PostgreSQL.Type
	}
	if o.DSN == "" {
		o.DSN = DSN()
	}
	cc := configfile.Connector{
		Name: Connector, Type: o.Type, Direction: o.Direction, Schedule: o.Schedule,
		Conflict: policy.NewestWins, OnSourceDelete: policy.DeleteRemove, MassDeleteThreshold: 1,
		Workers: o.Workers, BatchSize: o.BatchSize,
		Settings: map[string]any{"dsn": o.DSN, "table": o.Table, "deletedAtColumn": "deleted_at", "batchSize": o.BatchSize,
			"changes": "poll"},
		Mapping: configfile.People(),
	}
	for k, v := range o.Settings {
		cc.Settings[k] = v
	}
	if o.Direction == policy.Both {
		cc.OnWorkspaceCreate, cc.OnWorkspaceDelete = policy.CreateRecord, policy.DeleteRemove
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: o.EmulatorURL, APIKey: o.APIKey, RateLimit: o.RateLimit, Burst: o.Burst,
			CustomFieldValues: emulator.TestCustomFieldValues()},
		State: configfile.State{Path: o.StatePath},
		Webhooks: configfile.Webhooks{Listen: o.Listen, Path: "/webhooks/workspace",
			PublicURL: o.PublicURL, AutoRegister: o.PublicURL != ""},
		Log:        configfile.Log{Level: o.LogLevel},
		Connectors: []configfile.Connector{cc},
	}
	path := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}
