package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// triggerQuery lists the row-level BEFORE UPDATE triggers of a table with
// their function's source (tgtype bits: 1 row, 2 before, 16 update).
const triggerQuery = `SELECT t.tgname, p.prosrc
FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
WHERE t.tgrelid = $1 AND NOT t.tgisinternal AND t.tgenabled <> 'D'
	AND (t.tgtype & 1) = 1 AND (t.tgtype & 2) = 2 AND (t.tgtype & 16) = 16`

const primaryKeyQuery = `SELECT a.attname FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = $1 AND i.indisprimary AND i.indnatts = 1`

// Inspect reads a table's columns from the catalog, for `syncd init`: the
// types, the primary key, and which columns a BEFORE UPDATE trigger sets.
// It connects with dsn as Open does; errors never carry the password.
func Inspect(ctx context.Context, dsn, table string) ([]sqlkit.ColumnInfo, error) {
	red := newRedactor(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", red.redact(err))
	}
	red.add(cfg.ConnConfig.Password)
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", red.redact(err))
	}
	defer pool.Close()
	cols, err := inspect(ctx, pool, table)
	if err != nil {
		return nil, red.redact(err)
	}
	return cols, nil
}

func inspect(ctx context.Context, pool *pgxpool.Pool, table string) ([]sqlkit.ColumnInfo, error) {
	var (
		oid                   uint32
		schema, name, relkind string
	)
	err := pool.QueryRow(ctx, relationQuery, table).Scan(&oid, &schema, &name, &relkind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("table: %q not found", table)
	}
	if err != nil {
		return nil, fmt.Errorf("table: resolve %q: %w", table, err)
	}
	rows, err := pool.Query(ctx, columnsQuery, oid)
	if err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", table, err)
	}
	var cols []sqlkit.ColumnInfo
	for rows.Next() {
		var c sqlkit.ColumnInfo
		var notNull bool
		var typname, category string
		if err := rows.Scan(&c.Name, &c.Type, &notNull, &typname, &category); err != nil {
			rows.Close()
			return nil, fmt.Errorf("table: columns of %s: %w", table, err)
		}
		k, _ := kindOf(typname, category)
		c.Time, c.Bool = k.isTime(), k == kindBool
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("table: columns of %s: %w", table, err)
	}
	var pk string
	if err := pool.QueryRow(ctx, primaryKeyQuery, oid).Scan(&pk); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("table: primary key of %s: %w", table, err)
	}
	triggers, err := updateTriggers(ctx, pool, oid)
	if err != nil {
		return nil, fmt.Errorf("table: triggers of %s: %w", table, err)
	}
	for i := range cols {
		cols[i].PrimaryKey = cols[i].Name == pk
		for tg, src := range triggers {
			if sqlkit.Assigns(src, cols[i].Name, true) {
				cols[i].SetOnUpdate = "trigger " + tg
			}
		}
	}
	return cols, nil
}

func updateTriggers(ctx context.Context, pool *pgxpool.Pool, oid uint32) (map[string]string, error) {
	rows, err := pool.Query(ctx, triggerQuery, oid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, src string
		if err := rows.Scan(&name, &src); err != nil {
			return nil, err
		}
		out[name] = src
	}
	return out, rows.Err()
}
