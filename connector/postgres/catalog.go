package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// kind is how a column's values are read into Go values.
type kind int

const (
	kindText kind = iota // read as its text form: string
	kindBool
	kindInt
	kindFloat
	// kindFloat4 is a real: read as the float64 of the server's text of
	// it (0.1, with extra_float_digits 1), never the widened float32
	// (0.10000000149011612), so that every reader gives the same value.
	kindFloat4
	kindTimestamptz
	kindTimestamp
	kindDate
	kindArray // read as text[]: []string
)

func (k kind) isTime() bool { return k == kindTimestamptz || k == kindTimestamp || k == kindDate }

// column is one column of the table, from the catalog.
type column struct {
	name    string // as in the catalog
	ident   string // quoted for SQL
	typ     string // format_type, for casts
	kind    kind
	notNull bool
	json    bool
	// padded is set for character(n) (bpchar) values and arrays of them,
	// whose text form keeps trailing blanks that a cast to text drops:
	// every reader drops them.
	padded bool
	// boolArray is set for boolean[]: its text form spells elements t
	// and f, which a cast to text[] spells true and false: every reader
	// spells them true and false.
	boolArray bool
}

// The column as sqlkit sees it.
func (c column) Name() string    { return c.name }
func (c column) HoldsTime() bool { return c.kind.isTime() }
func (c column) Type() string    { return c.typ }

// table is what the connector knows of its table or view.
type table struct {
	oid     uint32
	relkind string
	name    string // quoted and schema-qualified
	columns []column
	id      column
	updated column
	deleted *column
	// fetch are the columns records carry.
	fetch []column
	// listed are the names Fields returns.
	listed   []string
	lookback time.Duration
}

// column returns the column a setting names: the exact name, or else
// the name folded to lower case, as PostgreSQL folds unquoted names.
func (t *table) column(name string) (column, bool) {
	for _, c := range t.columns {
		if c.name == name {
			return c, true
		}
	}
	lower := strings.ToLower(name)
	for _, c := range t.columns {
		if c.name == lower {
			return c, true
		}
	}
	return column{}, false
}

const relationQuery = `SELECT c.oid, n.nspname, c.relname, c.relkind::text
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = to_regclass($1)`

const columnsQuery = `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
	bt.typname, bt.typcategory::text
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

// loadTable resolves the settings' table and columns in the catalog.
// fields, when given, are the columns records must carry.
func loadTable(ctx context.Context, pool *pgxpool.Pool, s *Settings, fields []string) (*table, error) {
	var (
		oid          uint32
		schema, name string
		relkind      string
		t            table
	)
	err := pool.QueryRow(ctx, relationQuery, s.Table).Scan(&oid, &schema, &name, &relkind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("table: %q not found", s.Table)
	}
	if err != nil {
		return nil, fmt.Errorf("table: resolve %q: %w", s.Table, err)
	}
	switch relkind {
	case "r", "p", "v", "m", "f":
	default:
		return nil, fmt.Errorf("table: %q is not a table or view (relkind %s)", s.Table, relkind)
	}
	t.name = pgx.Identifier{schema, name}.Sanitize()
	t.oid, t.relkind = oid, relkind

	rows, err := pool.Query(ctx, columnsQuery, oid)
	if err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
	}
	for rows.Next() {
		var c column
		var typname, category string
		if err := rows.Scan(&c.name, &c.typ, &c.notNull, &typname, &category); err != nil {
			rows.Close()
			return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
		}
		c.ident = pgx.Identifier{c.name}.Sanitize()
		c.kind, c.json = kindOf(typname, category)
		c.padded = typname == "bpchar" || typname == "_bpchar"
		c.boolArray = typname == "_bool"
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
	}

	picked, errs := sqlkit.Pick(sqlkit.Catalog[column]{Table: t.name, Find: t.column, All: t.columns}, s.names(), DefaultLookback, fields)
	t.id, t.updated, t.deleted, t.fetch, t.listed, t.lookback = picked.ID, picked.Updated, picked.Deleted, picked.Fetch, picked.Listed, picked.Lookback
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &t, nil
}

// kindOf maps a (base) type to the way its values are read.
func kindOf(typname, category string) (k kind, json bool) {
	switch typname {
	case "bool":
		return kindBool, false
	case "int2", "int4", "int8":
		return kindInt, false
	case "float4":
		return kindFloat4, false
	case "float8":
		return kindFloat, false
	case "timestamptz":
		return kindTimestamptz, false
	case "timestamp":
		return kindTimestamp, false
	case "date":
		return kindDate, false
	case "json", "jsonb":
		return kindText, true
	}
	if category == "A" {
		return kindArray, false
	}
	return kindText, false
}

// Fields returns the columns of the table (or of the columns setting).
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return append([]string(nil), s.tbl.listed...), nil
}
