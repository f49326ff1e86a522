package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// TestActivityTable writes calls and texts as rows of a call_log table
// on the real server (connectortest.ActivityTable).
func TestActivityTable(t *testing.T) {
	pool, schema := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+schema+`.contacts (id bigint PRIMARY KEY, name text, updated_at timestamptz NOT NULL DEFAULT now())`)
	table := schema + ".call_log"
	connectortest.ActivityTable(t, connectortest.ActivityTableDB{
		Table: table,
		Create: func(t *testing.T, unique bool) {
			key := "activity_key text"
			if unique {
				key += " PRIMARY KEY"
			}
			pgtest.Exec(t, pool, `DROP TABLE IF EXISTS `+table)
			pgtest.Exec(t, pool, `CREATE TABLE `+table+` (`+key+`, contact_id bigint, kind text, started_at timestamptz,
				direction text, seconds integer, summary text, transcript text, body varchar(40), owner_email text)`)
		},
		Open: func(t *testing.T, spec *connector.ActivityTable) connector.ActivityWriter {
			typ, _ := connector.Lookup(postgres.TypeName)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			src, err := typ.Open(ctx, connector.Options{Name: "test", Settings: settings(schema + ".contacts"), ActivityTable: spec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = src.Close() })
			return src.(connector.ActivityWriter)
		},
		Rows: func(t *testing.T) []map[string]string {
			rows, err := pool.Query(context.Background(), `SELECT activity_key, coalesce(contact_id::text, ''), coalesce(kind, ''),
				coalesce(to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''), coalesce(direction, ''),
				coalesce(seconds::text, ''), coalesce(summary, ''), coalesce(transcript, ''), coalesce(body, ''), coalesce(owner_email, '')
				FROM `+table+` ORDER BY activity_key`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var out []map[string]string
			for rows.Next() {
				v := make([]string, 10)
				if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]); err != nil {
					t.Fatal(err)
				}
				out = append(out, map[string]string{"activity_key": v[0], "contact_id": v[1], "kind": v[2], "started_at": v[3], "direction": v[4],
					"seconds": v[5], "summary": v[6], "transcript": v[7], "body": v[8], "owner_email": v[9]})
			}
			return out
		},
	})
}
