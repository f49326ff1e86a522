package bench

import (
	"path/filepath"
	"testing"

	"github.com/syncd-io/syncd/config"
	_ "github.com/syncd-io/syncd/connector/csv"
	_ "github.com/syncd-io/syncd/connector/mysql"
	_ "github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
)

// The configurations the benchmarks run syncd with are valid and say
// what the scenarios need.
func TestConfigurations(t *testing.T) {
	env := func() *Env { return &Env{Dir: t.TempDir(), URL: "http://127.0.0.1:9", Rate: 50, Burst: 10} }
	csvPath, err := env().WriteConfig("rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	pgPath, err := env().postgresConfig("postgres://u@127.0.0.1:9/x", "bench_rows", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The edits scenarios' connectors, as Edits completes them.
	edits := func(tb editTable, mode string) string {
		e := env()
		cc, cleanup := tb.connector(mode)
		cleanup()
		cc.Name, cc.Direction, cc.Workers, cc.Schedule = "bench", policy.ToWorkspace, 8, "@every 1h"
		path := filepath.Join(e.Dir, "syncd.yaml")
		if err := e.config(cc, configfile.Webhooks{}, "warn").Write(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	binlogPath := edits(&mysqlTable{dsn: "u@tcp(127.0.0.1:9)/x"}, "binlog")
	for name, check := range map[string]func(*config.ConnectorConfig) bool{
		csvPath:    func(cc *config.ConnectorConfig) bool { return cc.Type == "csv" && cc.Workers == 8 },
		pgPath:     func(cc *config.ConnectorConfig) bool { return cc.Type == "postgres" && cc.Direction == policy.Both },
		binlogPath: func(cc *config.ConnectorConfig) bool { return cc.Type == "mysql" && cc.Direction == policy.ToWorkspace },
	} {
		cfg, err := config.Load(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		cc := &cfg.Connectors[0]
		if cfg.Workspace.APIKey != APIKey || cfg.Workspace.RateLimit != 50 || cfg.Admin.Listen != "" ||
			cc.Mapping.ExternalID != "id" || len(cc.Mapping.Fields) != 5 || !check(cc) {
			t.Errorf("%s: %+v", name, cfg)
		}
	}
}
