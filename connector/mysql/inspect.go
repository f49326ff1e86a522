package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// inspectColumnsQuery adds the key and the ON UPDATE clause (in EXTRA) to
// columnsQuery's facts.
const inspectColumnsQuery = `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COLUMN_KEY, EXTRA
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

// triggersQuery lists the BEFORE UPDATE triggers of a table with their
// bodies.
const triggersQuery = `SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS
WHERE EVENT_OBJECT_SCHEMA = ? AND EVENT_OBJECT_TABLE = ? AND ACTION_TIMING = 'BEFORE' AND EVENT_MANIPULATION = 'UPDATE'`

// Inspect reads a table's columns from information_schema, for `syncd
// init`: their types, the primary key, and which columns move on every
// update (ON UPDATE CURRENT_TIMESTAMP, or a BEFORE UPDATE trigger that
// sets them). table is table or db.table; errors never carry the password.
func Inspect(ctx context.Context, dsn, table string) ([]sqlkit.ColumnInfo, error) {
	db, cfg, red, err := openInspection(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cols, err := inspect(ctx, db, cfg.DBName, table)
	if err != nil {
		return nil, red.Redact(err)
	}
	return cols, nil
}

// ServerTimeZone reads the server's global time_zone, for `syncd init`
// to write as timeZone: value is the setting naming it (an offset such as
// -07:00, or a zone name such as UTC or Europe/Berlin), "" when the
// server's zone is its host's named only by an abbreviation (PDT), which
// no setting names exactly; server is the zone as the server says it.
func ServerTimeZone(ctx context.Context, dsn string) (value, server string, err error) {
	db, _, red, err := openInspection(dsn)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	z, err := readServerZone(ctx, db)
	if err != nil {
		return "", "", red.Redact(err)
	}
	loc, exact := z.location()
	if !exact {
		return "", z.String(), nil
	}
	return loc.String(), z.String(), nil
}

// openInspection opens a pool on dsn for a moment's look; errors never
// carry the password.
func openInspection(dsn string) (*sql.DB, *mysql.Config, *sqlkit.Redactor, error) {
	red := sqlkit.NewRedactor(dsn)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dsn: %w", red.Redact(err))
	}
	red.Add(cfg.Passwd)
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dsn: %w", red.Redact(err))
	}
	return sql.OpenDB(conn), cfg, red, nil
}

func inspect(ctx context.Context, db *sql.DB, dbName, table string) ([]sqlkit.ColumnInfo, error) {
	schema, name := dbName, table
	if i := strings.Index(table, "."); i >= 0 {
		schema, name = table[:i], table[i+1:]
	}
	schema, name = strings.Trim(schema, "`"), strings.Trim(name, "`")
	if schema == "" {
		return nil, fmt.Errorf("table: %q names no database and the dsn selects none (use db.table or user:pass@tcp(host:3306)/db)", table)
	}
	rows, err := db.QueryContext(ctx, inspectColumnsQuery, schema, name)
	if err != nil {
		return nil, fmt.Errorf("table: columns of %s.%s: %w", schema, name, err)
	}
	defer rows.Close()
	var cols []sqlkit.ColumnInfo
	pks := 0
	for rows.Next() {
		var c sqlkit.ColumnInfo
		var dataType, key, extra string
		if err := rows.Scan(&c.Name, &dataType, &c.Type, &key, &extra); err != nil {
			return nil, fmt.Errorf("table: columns of %s.%s: %w", schema, name, err)
		}
		k := kindOf(strings.ToLower(dataType), strings.ToLower(c.Type))
		c.Time, c.Bool = k.isTime(), k == kindBool
		if key == "PRI" {
			c.PrimaryKey = true
			pks++
		}
		if strings.Contains(strings.ToLower(extra), "on update") {
			c.SetOnUpdate = "ON UPDATE CURRENT_TIMESTAMP"
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table: columns of %s.%s: %w", schema, name, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("table: %q not found in database %s", table, schema)
	}
	if pks > 1 { // a composite key is no id
		for i := range cols {
			cols[i].PrimaryKey = false
		}
	}
	trows, err := db.QueryContext(ctx, triggersQuery, schema, name)
	if err != nil {
		return nil, fmt.Errorf("table: triggers of %s.%s: %w", schema, name, err)
	}
	defer trows.Close()
	for trows.Next() {
		var tg, body string
		if err := trows.Scan(&tg, &body); err != nil {
			return nil, fmt.Errorf("table: triggers of %s.%s: %w", schema, name, err)
		}
		for i := range cols {
			if cols[i].SetOnUpdate == "" && sqlkit.Assigns(body, cols[i].Name, false) {
				cols[i].SetOnUpdate = "trigger " + tg
			}
		}
	}
	return cols, trows.Err()
}
