package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
)

// DefaultPostgresURL is the server the PostgreSQL scenarios use when
// SYNCD_BENCH_POSTGRES_URL and SYNCD_TEST_POSTGRES_URL are unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL returns the server of the PostgreSQL scenarios.
func PostgresURL() string {
	for _, k := range []string{"SYNCD_BENCH_POSTGRES_URL", "SYNCD_TEST_POSTGRES_URL"} {
		if u := os.Getenv(k); u != "" {
			return u
		}
	}
	return DefaultPostgresURL
}

// pgTable is a generated contacts table in a schema of its own, dropped
// by drop. Every UPDATE of a row moves its updated_at to the statement's
// clock_timestamp() and sends a notification on channel with the row's
// id and last_name, delivered to listeners when the UPDATE commits.
type pgTable struct {
	pool    *pgxpool.Pool
	schema  string
	Name    string // schema-qualified
	Channel string
}

// newPGTable creates the table holding rows 1..n of Row.
func newPGTable(ctx context.Context, dsn string, n int) (*pgTable, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL unreachable (set SYNCD_BENCH_POSTGRES_URL; start the server with "+
			"`pg_ctlcluster --skip-systemctl-redirect 15 main start`): %w", err)
	}
	schema := fmt.Sprintf("syncd_bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	t := &pgTable{pool: pool, schema: schema, Name: schema + ".contacts", Channel: schema}
	stmts := []string{
		"CREATE SCHEMA " + schema,
		fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, first_name text, last_name text, email text, phone text,
			company text, updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`, t.Name),
		fmt.Sprintf(`INSERT INTO %s (id, first_name, last_name, email, phone, company, updated_at)
			SELECT i, 'First'||i, 'Last'||i, 'person'||i||'@example.com', '+1415'||lpad((i %% 10000000)::text, 7, '0'),
			       'Company '||(i %% 97), timestamptz '2026-01-01' + i * interval '1 millisecond'
			FROM generate_series(1, %d) AS i`, t.Name, n),
		fmt.Sprintf(`CREATE FUNCTION %s.touch() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				NEW.updated_at := clock_timestamp();
				PERFORM pg_notify('%s', NEW.id || ':' || coalesce(NEW.last_name, ''));
				RETURN NEW;
			END $$`, schema, t.Channel),
		fmt.Sprintf(`CREATE TRIGGER touch BEFORE UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION %s.touch()`, t.Name, schema),
		"ANALYZE " + t.Name,
	}
	for _, s := range stmts {
		if _, err := pool.Exec(ctx, s); err != nil {
			t.drop()
			return nil, fmt.Errorf("set up the table: %w", err)
		}
	}
	return t, nil
}

// drop removes the schema and closes the pool.
func (t *pgTable) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = t.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+t.schema+" CASCADE")
	t.pool.Close()
}

// connector follows the table, streaming from a slot of its own
// (dropped by cleanup) when mode is "logical".
func (t *pgTable) connector(mode string) (configfile.Connector, func()) {
	settings := map[string]any{"dsn": PostgresURL(), "table": t.Name, "batchSize": 1000, "changes": mode}
	cleanup := func() {}
	if mode == "logical" {
		slot := "syncd_" + t.schema
		settings["slot"] = slot
		cleanup = func() {
			for range 100 { // the daemon's walsender may still be ending
				if _, err := t.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, slot); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			_, _ = t.pool.Exec(context.Background(), "DROP PUBLICATION IF EXISTS "+slot)
		}
	}
	return configfile.Connector{Type: "postgres", Settings: settings}, cleanup
}

func (t *pgTable) setLastName(ctx context.Context, id int, name string) error {
	_, err := t.pool.Exec(ctx, "UPDATE "+t.Name+" SET last_name = $1 WHERE id = $2", name, id)
	return err
}

func (t *pgTable) setAllLastNames(ctx context.Context) error {
	_, err := t.pool.Exec(ctx, "UPDATE "+t.Name+" SET last_name = 'Tx-' || id")
	return err
}

// listen returns a connection listening on the table's channel.
func (t *pgTable) listen(ctx context.Context) (*pgxpool.Conn, error) {
	conn, err := t.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{t.Channel}.Sanitize()); err != nil {
		conn.Release()
		return nil, err
	}
	return conn, nil
}

// postgresConfig writes a configuration of one postgres connector
// synced both ways, with the webhook receiver on listen. It polls
// (changes: poll), as the figures of BENCHMARKS.md's postgres scenarios
// were measured; edits-logical measures streaming (logical.go).
func (e *Env) postgresConfig(dsn, table, listen string) (string, error) {
	f := e.config(configfile.Connector{Name: "bench", Type: "postgres", Direction: policy.Both, Schedule: "@every 1h", Workers: 8,
		Settings: map[string]any{"dsn": dsn, "table": table, "batchSize": 1000, "changes": "poll"}},
		configfile.Webhooks{Listen: listen, Path: "/webhooks/workspace"}, "info")
	path := filepath.Join(e.Dir, "syncd.yaml")
	return path, f.Write(path)
}
