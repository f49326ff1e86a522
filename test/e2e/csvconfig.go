package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/syncd-io/syncd/connector/csv" // the connector of these configurations
	"github.com/syncd-io/syncd/internal/configfile"
)

// CSVOptions describe a CSV export of generated people and a
// configuration syncing it one way into a workspace.
type CSVOptions struct {
	EmulatorURL string
	APIKey      string
	// Rows of the export: row-1, row-2... with a name and an e-mail.
	Rows int
	// BadEvery makes every BadEvery-th row's e-mail invalid (0: none), so
	// that it is set aside as a dead letter.
	BadEvery int
	// RateLimit and Burst of the workspace client (default 200 and 20).
	RateLimit float64
	Burst     int
	// BatchSize of the file's reads (default 100).
	BatchSize int
	// AdminListen is admin.listen ("" for none).
	AdminListen string
	// Company is every row's company (a column the mapping carries).
	Company string
}

// WriteCSVConfig writes dir/contacts.csv and dir/syncd.yaml (state in
// dir/syncd.db, connector "crm") and returns the configuration's path.
// Writing it again with another Company changes every row.
func WriteCSVConfig(t testing.TB, dir string, o CSVOptions) string {
	t.Helper()
	if o.RateLimit == 0 {
		o.RateLimit = 200
	}
	if o.Burst == 0 {
		o.Burst = 20
	}
	if o.BatchSize == 0 {
		o.BatchSize = 100
	}
	var b strings.Builder
	b.WriteString("id,first_name,last_name,email,company\n")
	for i := 1; i <= o.Rows; i++ {
		email := fmt.Sprintf("p%d@example.com", i)
		if o.BadEvery > 0 && i%o.BadEvery == 0 {
			email = "not an address"
		}
		fmt.Fprintf(&b, "row-%d,First%d,Last%d,%s,%s\n", i, i, i, email, o.Company)
	}
	csvPath := filepath.Join(dir, "contacts.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := configfile.File{
		Workspace: configfile.Workspace{BaseURL: o.EmulatorURL, APIKey: o.APIKey, RateLimit: o.RateLimit, Burst: o.Burst},
		State:     configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Admin:     configfile.Admin{Listen: o.AdminListen},
		Connectors: []configfile.Connector{{Name: "crm", Type: "csv", Schedule: "@every 1h",
			Settings: map[string]any{"path": csvPath, "batchSize": o.BatchSize},
			Mapping:  configfile.Names(),
		}},
	}
	f.Connectors[0].Mapping.Fields["company"] = configfile.From("company")
	cfg := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}
