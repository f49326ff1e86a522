package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestValidateChecksTheMySQLTable: validate opens a mysql connector's
// table and reports, as problems, a missing table or column and a cursor
// of an unusable type; with a DATETIME cursor it notes the zone it takes.
func TestValidateChecksTheMySQLTable(t *testing.T) {
	_, dsn := mysqltest.NewDatabase(t)
	db := mysqltest.Open(t, dsn)
	mysqltest.Exec(t, db, `CREATE TABLE good (id INT PRIMARY KEY, first_name TEXT, email TEXT, updated_at DATETIME(6) NOT NULL)`)
	mysqltest.Exec(t, db, `CREATE TABLE textcursor (id INT PRIMARY KEY, first_name TEXT, email TEXT, updated_at TEXT)`)
	config := func(table string) string { return mysqlConfig(dsn, table, "timeZone: Europe/Berlin") }
	tests := []struct {
		name  string
		table string
		want  string
	}{
		{"no such table", "nobody", `connectors[shop].settings: open mysql connector shop: table: "nobody" not found`},
		{"cursor not a time", "textcursor", "updatedAtColumn: column updated_at is of type text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantInvalid(t, config(tt.table), 1, tt.want)
		})
	}
	t.Run("a DATETIME cursor is noted with its zone", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "syncd.yaml")
		if err := os.WriteFile(cfg, []byte(config("good")), 0o600); err != nil {
			t.Fatal(err)
		}
		_, serr, err := runMain(t, "validate", "--config", cfg)
		if err != nil {
			t.Fatalf("validate: %v\n%s", err, serr)
		}
		wantLines(t, "stderr", serr, "note: connectors[shop]: DATETIME columns updated_at carry no time zone: read and written as Europe/Berlin")
	})
}

// mysqlConfig is a configuration of one mysql connector, shop, syncing
// table's first_name and email, with more settings (key: value lines).
func mysqlConfig(dsn, table string, settings ...string) string {
	y := `workspace:
  baseURL: http://127.0.0.1:1
  apiKey: k
connectors:
  - name: shop
    type: mysql
    settings:
      dsn: "` + dsn + `"
      table: ` + table + `
`
	for _, s := range settings {
		y += "      " + s + "\n"
	}
	return y + `    mapping:
      fields:
        firstName: first_name
        emails.work: email
`
}
