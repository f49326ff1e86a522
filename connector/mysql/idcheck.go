package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// idColumnQuery reads, for the id column (schema, table, column), whether
// a unique index (the primary key included) holds it alone, its default
// (MariaDB: NULL without one, the text NULL for DEFAULT NULL), its EXTRA
// (auto_increment, GENERATED) and the table's type, and whether a BEFORE
// INSERT trigger may set it.
const idColumnQuery = `SELECT
	EXISTS (SELECT 1 FROM information_schema.STATISTICS s WHERE s.TABLE_SCHEMA = c.TABLE_SCHEMA AND s.TABLE_NAME = c.TABLE_NAME
		AND s.NON_UNIQUE = 0 AND s.COLUMN_NAME = c.COLUMN_NAME
		AND NOT EXISTS (SELECT 1 FROM information_schema.STATISTICS o WHERE o.TABLE_SCHEMA = s.TABLE_SCHEMA AND o.TABLE_NAME = s.TABLE_NAME
			AND o.INDEX_NAME = s.INDEX_NAME AND o.COLUMN_NAME <> s.COLUMN_NAME)),
	c.COLUMN_DEFAULT, c.EXTRA, t.TABLE_TYPE,
	EXISTS (SELECT 1 FROM information_schema.TRIGGERS g WHERE g.EVENT_OBJECT_SCHEMA = c.TABLE_SCHEMA AND g.EVENT_OBJECT_TABLE = c.TABLE_NAME
		AND g.EVENT_MANIPULATION = 'INSERT' AND g.ACTION_TIMING = 'BEFORE')
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
WHERE c.TABLE_SCHEMA = ? AND c.TABLE_NAME = ? AND c.COLUMN_NAME = ?`

// IDColumnCheck says whether the table's id column is unique and filled
// by the server on insert in a way the connector reads back, for syncd
// validate; nil for a view, which has no index to check.
func (s *Source) IDColumnCheck(ctx context.Context) (*sqlkit.IDColumn, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	schema, name := unquoteTable(s.tbl.name)
	var (
		def              sql.NullString
		extra, tableType string
		trigger          bool
	)
	c := &sqlkit.IDColumn{Table: s.tbl.name, Column: s.tbl.id.name}
	err := s.db.QueryRowContext(ctx, idColumnQuery, schema, name, s.tbl.id.name).Scan(&c.Unique, &def, &extra, &tableType, &trigger)
	if err != nil {
		return nil, fmt.Errorf("check id column %s of %s: %w", s.tbl.id.name, s.tbl.name, s.red.Redact(err))
	}
	if tableType == "VIEW" {
		return nil, nil
	}
	extra = strings.ToLower(extra)
	autoInc := strings.Contains(extra, "auto_increment")
	defaulted := (def.Valid && def.String != "NULL") || strings.Contains(extra, "generated")
	// Without INSERT ... RETURNING (MySQL) only an AUTO_INCREMENT id can
	// be read back (LAST_INSERT_ID()); with it (MariaDB) any default.
	c.Filled = autoInc || trigger || (s.returning && defaulted)
	id := quote(s.tbl.id.name)
	c.AddUnique = fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s) (or ADD UNIQUE (%s))", s.tbl.name, id, id)
	switch {
	case defaulted:
		c.CannotFill = fmt.Sprintf("this server has no INSERT ... RETURNING to read back the default of %s", s.tbl.id.name)
	default:
		c.CannotFill = fmt.Sprintf("%s has no default and is not AUTO_INCREMENT", s.tbl.id.name)
	}
	switch {
	case s.tbl.id.kind == kindInt:
		c.AddFill = fmt.Sprintf("make it AUTO_INCREMENT: ALTER TABLE %s MODIFY %s %s NOT NULL AUTO_INCREMENT", s.tbl.name, id, s.tbl.id.typ)
	case s.returning:
		c.AddFill = fmt.Sprintf("give it a default: ALTER TABLE %s MODIFY %s %s NOT NULL DEFAULT (UUID())", s.tbl.name, id, s.tbl.id.typ)
	default:
		c.AddFill = "use an integer AUTO_INCREMENT id column (this server cannot return another default)"
	}
	return c, nil
}

// unquoteTable splits a table name as quote wrote it (`db`.`table`).
func unquoteTable(qualified string) (schema, name string) {
	inner := strings.TrimSuffix(strings.TrimPrefix(qualified, "`"), "`")
	schema, name, _ = strings.Cut(inner, "`.`")
	return strings.ReplaceAll(schema, "``", "`"), strings.ReplaceAll(name, "``", "`")
}
