package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Activities: each call and text is a row of the table the activities
// block names, its columns mapped like the contact mapping (see
// sqlkit.Activities): INSERT ... ON CONFLICT (key) DO UPDATE, so the key
// column needs a unique index or primary key of its own. Values go as
// text cast to the column's type (CAST($1::text AS timestamptz)), so any
// column type whose input takes the value works: timestamptz, timestamp
// (UTC), integer or interval for the duration in seconds; text columns
// take the value as it is, so varchar(n) refuses a longer one.

var _ connector.ActivityWriter = (*Source)(nil)

// activityDialect is PostgreSQL's side of the activity writer.
func activityDialect(pool *pgxpool.Pool, red *redactor) sqlkit.ActivityDialect {
	return sqlkit.ActivityDialect{
		Inspect: func(ctx context.Context, table string) (string, map[string]string, map[string]bool, error) {
			return inspectActivities(ctx, pool, table)
		},
		Exec: func(ctx context.Context, q string, args ...any) error {
			_, err := pool.Exec(ctx, q, args...)
			return err
		},
		Exists: func(ctx context.Context, q string, args ...any) (bool, error) {
			var one int
			err := pool.QueryRow(ctx, q, args...).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return false, nil
			}
			return err == nil, err
		},
		Quote: func(name string) string { return pgx.Identifier{name}.Sanitize() },
		Param: func(i int, typ string) string {
			if typ == "text" || strings.HasPrefix(typ, "character") {
				// Assigned as it is, so that a value over varchar(n)'s
				// length is refused (an explicit cast would cut it).
				return fmt.Sprintf("$%d", i)
			}
			return fmt.Sprintf("CAST($%d::text AS %s)", i, typ)
		},
		Upsert: func(key string, cols []string) string {
			if len(cols) == 0 {
				return "ON CONFLICT (" + pgx.Identifier{key}.Sanitize() + ") DO NOTHING"
			}
			set := make([]string, len(cols))
			for i, c := range cols {
				q := pgx.Identifier{c}.Sanitize()
				set[i] = q + " = EXCLUDED." + q
			}
			return "ON CONFLICT (" + pgx.Identifier{key}.Sanitize() + ") DO UPDATE SET " + strings.Join(set, ", ")
		},
		TimeFormat: time.RFC3339Nano,
		Refusal:    refusal,
		Redact:     red.redact,
	}
}

// inspectActivities reads the table's columns and single-column unique
// indexes (primary key included; partial and expression indexes are no
// use to ON CONFLICT (column)).
func inspectActivities(ctx context.Context, pool *pgxpool.Pool, table string) (string, map[string]string, map[string]bool, error) {
	var name *string
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1)::text", table).Scan(&name); err != nil || name == nil {
		return "", nil, nil, err
	}
	cols, unique := map[string]string{}, map[string]bool{}
	rows, err := pool.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, table)
	if err != nil {
		return "", nil, nil, err
	}
	for rows.Next() {
		var c, t string
		if err := rows.Scan(&c, &t); err != nil {
			rows.Close()
			return "", nil, nil, err
		}
		cols[c] = t
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", nil, nil, err
	}
	rows, err = pool.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
		WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL AND i.indexprs IS NULL`, table)
	if err != nil {
		return "", nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return "", nil, nil, err
		}
		unique[c] = true
	}
	return *name, cols, unique, rows.Err()
}

// ActivityKinds returns calls and messages.
func (s *Source) ActivityKinds() []connector.ActivityKind { return s.acts.ActivityKinds() }

// FindActivity returns key when the activities table has its row.
func (s *Source) FindActivity(ctx context.Context, kind connector.ActivityKind, key, recordID string) (string, error) {
	if err := s.usable(ctx); err != nil {
		return "", err
	}
	return s.acts.FindActivity(ctx, kind, key, recordID)
}

// WriteActivity writes the activity's row (an upsert on the key).
func (s *Source) WriteActivity(ctx context.Context, id string, a connector.Activity) (string, error) {
	if err := s.usable(ctx); err != nil {
		return "", err
	}
	return s.acts.WriteActivity(ctx, id, a)
}

// CheckActivities inspects the activities table (syncd validate).
func (s *Source) CheckActivities(ctx context.Context) error { return s.acts.Check(ctx) }

// TableShapes lists the database's tables (outside the system schemas)
// with their columns and unique columns, for `syncd init` to find an
// activities table among them.
func TableShapes(ctx context.Context, dsn string) ([]sqlkit.TableShape, error) {
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
	rows, err := pool.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1 LIMIT 500`)
	if err != nil {
		return nil, red.redact(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, red.redact(err)
	}
	var out []sqlkit.TableShape
	for _, n := range names {
		_, cols, unique, err := inspectActivities(ctx, pool, n)
		if err != nil {
			return nil, red.redact(err)
		}
		out = append(out, sqlkit.TableShape{Name: n, Types: cols, Unique: unique})
	}
	return out, nil
}
