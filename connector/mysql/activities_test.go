package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestActivityTable writes calls and texts as rows of a call_log table
// on the real server (connectortest.ActivityTable).
func TestActivityTable(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, "CREATE TABLE contacts (id BIGINT PRIMARY KEY, name TEXT, updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))")
	connectortest.ActivityTable(t, connectortest.ActivityTableDB{
		Table: "call_log",
		Create: func(t *testing.T, unique bool) {
			key := "activity_key VARCHAR(200)"
			if unique {
				key += " PRIMARY KEY"
			}
			mysqltest.Exec(t, db, "DROP TABLE IF EXISTS call_log")
			mysqltest.Exec(t, db, "CREATE TABLE call_log ("+key+", contact_id BIGINT, kind VARCHAR(10), started_at TIMESTAMP(3) NULL, "+
				"direction VARCHAR(10), seconds INT, summary TEXT, transcript TEXT, body VARCHAR(40), owner_email VARCHAR(200))")
		},
		Open: func(t *testing.T, spec *connector.ActivityTable) connector.ActivityWriter {
			typ, _ := connector.Lookup(mysql.TypeName)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src, err := typ.Open(ctx, connector.Options{Name: "test", Settings: settings(dsn, "contacts"), ActivityTable: spec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = src.Close() })
			return src.(connector.ActivityWriter)
		},
		Rows: func(t *testing.T) []map[string]string {
			// UNIX_TIMESTAMP reads the TIMESTAMP's instant whatever the
			// session's zone.
			rows, err := db.Query(`SELECT activity_key, contact_id, kind, UNIX_TIMESTAMP(started_at), direction, seconds, summary,
				transcript, body, owner_email FROM call_log ORDER BY activity_key`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []map[string]string
			for rows.Next() {
				v := make([]sql.NullString, 10)
				if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]); err != nil {
					t.Fatal(err)
				}
				at := ""
				if v[3].Valid {
					var sec float64
					if _, err := fmt.Sscan(v[3].String, &sec); err != nil {
						t.Fatal(err)
					}
					at = time.Unix(int64(sec), 0).UTC().Format(time.RFC3339)
				}
				out = append(out, map[string]string{"activity_key": v[0].String, "contact_id": v[1].String, "kind": v[2].String, "started_at": at,
					"direction": v[4].String, "seconds": v[5].String, "summary": v[6].String, "transcript": v[7].String, "body": v[8].String,
					"owner_email": v[9].String})
			}
			return out
		},
	})
}
