package postgres_test

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// openSource opens a postgres source through the registry, as the daemon
// does, and closes it at the test's end.
func openSource(t *testing.T, s *postgres.Settings, fields ...string) *postgres.Source {
	t.Helper()
	src, err := openErr(t, s, fields...)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src.(*postgres.Source)
}

func openErr(t *testing.T, s *postgres.Settings, fields ...string) (connector.Source, error) {
	t.Helper()
	typ, ok := connector.Lookup(postgres.TypeName)
	if !ok {
		t.Fatal("postgres connector not registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return typ.Open(ctx, connector.Options{Name: "test", Settings: s, Fields: fields})
}

// settings returns settings on the test server for table, with no
// look-back (an exact cursor) and polling unless changed: a test of
// logical replication sets changes and a slot of its own (logicalTable),
// which it drops at its end.
func settings(table string, mod ...func(*postgres.Settings)) *postgres.Settings {
	s := postgres.NewSettings()
	s.DSN = pgtest.URL()
	s.Table = table
	s.Changes = postgres.ChangesPoll
	zero := time.Duration(0)
	s.Lookback = &zero
	for _, m := range mod {
		m(s)
	}
	return s
}

// tableStore is a contacts table in a test's own schema.
type tableStore struct {
	pool *pgxpool.Pool
	// table is the base table the store writes (quoted, qualified).
	table string
	soft  bool
	open  func(t *testing.T) connector.Source
}

// variant is one shape of table the contract suite runs on.
type variant struct {
	name      string
	idType    string // column definition of id
	missingID string
	soft      bool
	view      bool
}

var variants = []variant{
	{name: "bigserial ids with soft delete", idType: "bigserial PRIMARY KEY", missingID: "987654321", soft: true},
	{name: "uuid ids with hard delete", idType: "uuid PRIMARY KEY DEFAULT gen_random_uuid()", missingID: "00000000-0000-0000-0000-000000000000"},
	{name: "view with soft delete", idType: "bigserial PRIMARY KEY", missingID: "987654321", soft: true, view: true},
}

const batchSize = 4

func (v variant) newStore(t *testing.T) connectortest.Store {
	pool := pgtest.Connect(t)
	schema := pgtest.NewSchema(t, pool)
	pgtest.Exec(t, pool, `CREATE TABLE `+schema+`.contacts (
		id `+v.idType+`,
		name text, email text, phone text,
		updated_at timestamptz NOT NULL DEFAULT now(),
		deleted_at timestamptz)`)
	rel := schema + ".contacts"
	if v.view {
		pgtest.Exec(t, pool, `CREATE VIEW `+schema+`.contacts_v AS
			SELECT id, name, email, phone, updated_at, deleted_at FROM `+schema+`.contacts`)
		rel = schema + ".contacts_v"
	}
	s := &tableStore{pool: pool, table: schema + ".contacts", soft: v.soft}
	s.open = func(t *testing.T) connector.Source {
		return openSource(t, settings(rel, func(s *postgres.Settings) {
			s.BatchSize = batchSize
			if v.soft {
				s.DeletedAtColumn = "deleted_at"
			}
		}))
	}
	return s
}

func (s *tableStore) Open(t *testing.T) connector.Source { return s.open(t) }

// Insert adds the records in one statement: one now(), one updated_at.
func (s *tableStore) Insert(t *testing.T, recs ...map[string]any) []string {
	t.Helper()
	cols := make([][]string, len(connectortest.Fields))
	for _, rec := range recs {
		for i, f := range connectortest.Fields {
			v, _ := rec[f].(string)
			cols[i] = append(cols[i], v)
		}
	}
	rows, err := s.pool.Query(context.Background(), `INSERT INTO `+s.table+` (name, email, phone)
		SELECT n, e, p FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(n, e, p, o)
		ORDER BY o RETURNING id::text`, cols[0], cols[1], cols[2])
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// Update changes the rows in one statement, moving updated_at as an
// application's trigger would.
func (s *tableStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	t.Helper()
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	sort.Strings(names)
	sets := []string{"updated_at = now()"}
	args := []any{ids}
	for i, f := range names {
		sets = append(sets, f+" = $"+string(rune('2'+i)))
		args = append(args, fields[f])
	}
	tag := pgtest.Exec(t, s.pool, `UPDATE `+s.table+` SET `+strings.Join(sets, ", ")+` WHERE id::text = ANY($1::text[])`, args...)
	if int(tag.RowsAffected()) != len(ids) {
		t.Fatalf("update touched %d rows, want %d", tag.RowsAffected(), len(ids))
	}
}

func (s *tableStore) Delete(t *testing.T, id string) {
	t.Helper()
	q := `DELETE FROM ` + s.table + ` WHERE id::text = $1`
	if s.soft {
		q = `UPDATE ` + s.table + ` SET deleted_at = now(), updated_at = now() WHERE id::text = $1`
	}
	if tag := pgtest.Exec(t, s.pool, q, id); tag.RowsAffected() != 1 {
		t.Fatalf("delete of %s touched %d rows", id, tag.RowsAffected())
	}
}
