package discover_test

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/discover"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestInitWritesTheMySQLServersTimeZone: for a table with DATETIME
// columns, discovery (what `syncd init` writes) sets timeZone to the
// server's global time_zone, west or east of UTC, the zone applications'
// sessions stamp them in; a table of TIMESTAMP columns gets none, and a
// timeZone given is kept.
func TestInitWritesTheMySQLServersTimeZone(t *testing.T) {
	tests := []struct {
		name   string
		global string
		cursor string
		given  string
		want   string // "" for no timeZone written
	}{
		{name: "DATETIME cursor, server west", global: "-07:00", cursor: "DATETIME(6)", want: "-07:00"},
		{name: "DATETIME cursor, server east", global: "+09:00", cursor: "DATETIME(6)", want: "+09:00"},
		{name: "TIMESTAMP cursor", global: "+09:00", cursor: "TIMESTAMP(6)"},
		{name: "timeZone given", global: "-07:00", cursor: "DATETIME(6)", given: "America/Phoenix", want: "America/Phoenix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dsn := mysqltest.NewDatabase(t)
			db := mysqltest.Open(t, dsn)
			mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100), email VARCHAR(100),
				updated_at `+tt.cursor+` NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
			mysqltest.Exec(t, db, `INSERT INTO contacts (id, name, email) VALUES (1, 'Ada', 'ada@example.com')`)
			set := map[string]string{"dsn": dsn, "table": "contacts"}
			if tt.given != "" {
				set["timeZone"] = tt.given
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var src *discover.Source
			var err error
			mysqltest.WithGlobalTimeZone(t, tt.global, func() {
				src, err = discover.Inspect(ctx, discover.Request{Type: "mysql", Set: set})
			})
			if err != nil {
				t.Fatalf("inspect: %v", err)
			}
			var got *discover.Setting
			for i, s := range src.Settings {
				if s.Key == "timeZone" {
					got = &src.Settings[i]
				}
			}
			switch {
			case tt.want == "" && got != nil:
				t.Fatalf("timeZone written as %v (%s), want none", got.Value, got.Why)
			case tt.want != "" && (got == nil || got.Value != tt.want):
				t.Fatalf("timeZone = %+v, want %s", got, tt.want)
			case tt.given != "" && got.Why != "":
				t.Fatalf("the timeZone given was replaced by what was found: %+v", got)
			case got != nil:
				t.Logf("timeZone: %v # %s", got.Value, got.Why)
			}
		})
	}
}
