package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// kind is how a column's values are read into Go values.
type kind int

const (
	kindText      kind = iota // read as text: string
	kindBool                  // tinyint(1), BOOL, BOOLEAN
	kindInt                   // the integer types
	kindFloat                 // FLOAT, DOUBLE
	kindTimestamp             // TIMESTAMP: stored in UTC
	kindDatetime              // DATETIME: no zone, read in the timeZone setting
	kindDate                  // DATE
	kindJSON                  // JSON (MariaDB: LONGTEXT with a JSON_VALID check)
)

func (k kind) isTime() bool { return k == kindTimestamp || k == kindDatetime || k == kindDate }

// column is one column of the table, from information_schema.COLUMNS.
type column struct {
	name    string // as in the catalog
	ident   string // quoted for SQL
	typ     string // COLUMN_TYPE, for messages
	kind    kind
	notNull bool
	autoInc bool
}

// The column as sqlkit sees it.
func (c column) Name() string    { return c.name }
func (c column) HoldsTime() bool { return c.kind.isTime() }
func (c column) Type() string    { return c.typ }

// table is what the connector knows of its table or view.
type table struct {
	name     string // quoted and qualified
	columns  []column
	id       column
	updated  column
	deleted  *column
	fetch    []column
	listed   []string
	lookback time.Duration
	// loc is the zone of DATETIME values.
	loc *time.Location
	// schema and relName are the database and table as the catalog
	// (and the binlog) name them; view is set for a view.
	schema, relName string
	view            bool
}

// column returns the column a setting names: MySQL's column names are
// not case-sensitive.
func (t *table) column(name string) (column, bool) {
	for _, c := range t.columns {
		if c.name == name {
			return c, true
		}
	}
	for _, c := range t.columns {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return column{}, false
}

// quote quotes an identifier with backticks, doubling those inside.
func quote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

const relationQuery = `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`

const columnsQuery = `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, EXTRA
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

// loadTable resolves the settings' table and columns in
// information_schema. dbName is the dsn's database; fields, when given,
// are the columns records must carry.
func loadTable(ctx context.Context, db *sql.DB, s *Settings, dbName string, loc *time.Location, fields []string) (*table, error) {
	schema, name := dbName, s.Table
	if i := strings.Index(s.Table, "."); i >= 0 {
		schema, name = s.Table[:i], s.Table[i+1:]
	}
	schema, name = strings.Trim(schema, "`"), strings.Trim(name, "`")
	if schema == "" {
		return nil, fmt.Errorf("table: %q names no database and the dsn selects none (use db.table or user:pass@tcp(host:3306)/db)", s.Table)
	}
	var relType string
	err := db.QueryRowContext(ctx, relationQuery, schema, name).Scan(&schema, &name, &relType)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("table: %q not found in database %s", s.Table, schema)
	}
	if err != nil {
		return nil, fmt.Errorf("table: resolve %q: %w", s.Table, err)
	}
	t := table{name: quote(schema) + "." + quote(name), schema: schema, relName: name, view: relType == "VIEW", loc: loc}
	rows, err := db.QueryContext(ctx, columnsQuery, schema, name)
	if err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var c column
		var dataType, nullable, extra string
		if err := rows.Scan(&c.name, &dataType, &c.typ, &nullable, &extra); err != nil {
			return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
		}
		c.ident = quote(c.name)
		c.notNull = nullable == "NO"
		c.autoInc = strings.Contains(strings.ToLower(extra), "auto_increment")
		c.kind = kindOf(strings.ToLower(dataType), strings.ToLower(c.typ))
		t.columns = append(t.columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", t.name, err)
	}
	picked, errs := sqlkit.Pick(sqlkit.Catalog[column]{Table: t.name, Find: t.column, All: t.columns}, s.names(), DefaultLookback, fields)
	t.id, t.updated, t.deleted, t.fetch, t.listed, t.lookback = picked.ID, picked.Updated, picked.Deleted, picked.Fetch, picked.Listed, picked.Lookback
	errs = append(errs, t.usable()...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &t, nil
}

// usable checks that the chosen columns have types the connector can
// use, naming the setting to fix.
func (t *table) usable() []error {
	var errs []error
	if t.id.name != "" {
		switch t.id.kind {
		case kindInt, kindText:
		default:
			errs = append(errs, fmt.Errorf("idColumn: column %s is of type %s; use an integer or text primary key", t.id.name, t.id.typ))
		}
	}
	if t.updated.name != "" {
		switch t.updated.kind {
		case kindTimestamp, kindDatetime, kindDate, kindInt:
		default:
			errs = append(errs, fmt.Errorf("updatedAtColumn: column %s is of type %s; use a TIMESTAMP(6) or DATETIME(6) every change moves (ON UPDATE CURRENT_TIMESTAMP(6)), or an integer", t.updated.name, t.updated.typ))
		}
	}
	if d := t.deleted; d != nil {
		switch d.kind {
		case kindTimestamp, kindDatetime, kindDate, kindBool:
		default:
			errs = append(errs, fmt.Errorf("deletedAtColumn: column %s is of type %s; use a TIMESTAMP, DATETIME or tinyint(1)", d.name, d.typ))
		}
	}
	return errs
}

// kindOf maps a column's DATA_TYPE and COLUMN_TYPE to the way its values
// are read. tinyint(1) is MySQL's and MariaDB's BOOLEAN.
func kindOf(dataType, columnType string) kind {
	switch dataType {
	case "tinyint":
		if strings.HasPrefix(columnType, "tinyint(1)") {
			return kindBool
		}
		return kindInt
	case "bool", "boolean":
		return kindBool
	case "smallint", "mediumint", "int", "integer", "bigint":
		return kindInt
	case "float", "double", "real":
		return kindFloat
	case "timestamp":
		return kindTimestamp
	case "datetime":
		return kindDatetime
	case "date":
		return kindDate
	case "json":
		return kindJSON
	}
	return kindText
}

// Fields returns the columns of the table (or of the columns setting).
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return append([]string(nil), s.tbl.listed...), nil
}
