package all_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// benchRows is the size of the table the SQL connectors are measured on.
const benchRows = 100_000

// sqlBenchTables fills a table of benchRows contacts in each SQL server
// and returns the connector settings that read it; both tables have the
// (cursor, id) index the keyset reads use.
var sqlBenchTables = []struct {
	name  string
	fill  func(b *testing.B) connector.Settings
	typed string
}{
	{"postgres", func(b *testing.B) connector.Settings {
		pool := pgtest.Connect(b)
		schema := pgtest.NewSchema(b, pool)
		pgtest.Exec(b, pool, `CREATE TABLE `+schema+`.contacts (id bigserial PRIMARY KEY, first_name text, last_name text,
			email text, phone text, updated_at timestamptz NOT NULL DEFAULT now())`)
		pgtest.Exec(b, pool, `INSERT INTO `+schema+`.contacts (first_name, last_name, email, phone, updated_at)
			SELECT 'First'||i, 'Last'||i, 'p'||i||'@example.com', '+1555'||lpad(i::text, 7, '0'), now() - (i||' seconds')::interval
			FROM generate_series(1, $1) i`, benchRows)
		pgtest.Exec(b, pool, `CREATE INDEX ON `+schema+`.contacts (updated_at, id)`)
		pgtest.Exec(b, pool, `ANALYZE `+schema+`.contacts`)
		s := postgres.NewSettings()
		s.DSN, s.Table, s.Changes = pgtest.URL(), schema+".contacts", postgres.ChangesPoll
		return s
	}, postgres.TypeName},
	{"mysql", func(b *testing.B) connector.Settings {
		_, dsn := mysqltest.NewDatabase(b)
		db := mysqltest.Open(b, dsn)
		mysqltest.Exec(b, db, `CREATE TABLE contacts (id BIGINT AUTO_INCREMENT PRIMARY KEY, first_name VARCHAR(100), last_name VARCHAR(100),
			email VARCHAR(200), phone VARCHAR(32), updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
			KEY (updated_at, id))`)
		mysqltest.Exec(b, db, fmt.Sprintf(`INSERT INTO contacts (first_name, last_name, email, phone, updated_at)
			SELECT CONCAT('First', seq), CONCAT('Last', seq), CONCAT('p', seq, '@example.com'), CONCAT('+1555', LPAD(seq, 7, '0')),
			NOW(6) - INTERVAL seq SECOND FROM seq_1_to_%d`, benchRows))
		s := mysql.NewSettings()
		s.DSN, s.Table, s.Changes = connector.Secret(dsn), "contacts", mysql.ChangesPoll
		return s
	}, mysql.TypeName},
}

// BenchmarkSQLRead measures, for each SQL connector on this machine's
// servers, a first read of benchRows rows (Changes from no checkpoint),
// an unchanged incremental pass (Changes from the first read's
// checkpoint, default lookback: the last minute's rows again) and a full
// unchanged pass (Snapshot, what a resync reads), in rows per second.
func BenchmarkSQLRead(b *testing.B) {
	for _, tt := range sqlBenchTables {
		b.Run(tt.name, func(b *testing.B) {
			set := tt.fill(b)
			typ, _ := connector.Lookup(tt.typed)
			ctx := context.Background()
			src, err := typ.Open(ctx, connector.Options{Name: "bench", Settings: set})
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			read := func(name string, run func(fn connector.BatchFunc) error) {
				b.Run(name, func(b *testing.B) {
					var n int
					start := time.Now()
					for b.Loop() {
						if err := run(func(_ context.Context, bt connector.Batch) error { n += len(bt.Records); return nil }); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "rows/s")
					b.ReportMetric(float64(n)/float64(b.N), "rows/op")
				})
			}
			var last string
			read("first", func(fn connector.BatchFunc) error {
				return src.Changes(ctx, "", func(ctx context.Context, bt connector.Batch) error { last = bt.Checkpoint; return fn(ctx, bt) })
			})
			read("unchanged-incremental", func(fn connector.BatchFunc) error { return src.Changes(ctx, last, fn) })
			read("unchanged-snapshot", func(fn connector.BatchFunc) error { return src.Snapshot(ctx, fn) })
		})
	}
}
