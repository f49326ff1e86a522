package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Activities: each call and text is a row of the table the activities
// block names, its columns mapped like the contact mapping (see
// sqlkit.Activities): INSERT ... ON DUPLICATE KEY UPDATE, so the key
// column needs a unique index or primary key of its own (and the table
// had better have no other unique key an activity could collide on: the
// server replaces the row of whichever key matches). Writes run in the
// reading session, at +00:00: a TIMESTAMP column holds the right instant
// and a DATETIME column the time in UTC. Values go as text, which the
// server converts to the column's type in its strict mode.

var _ connector.ActivityWriter = (*Source)(nil)

func activityDialect(db *sql.DB, red *sqlkit.Redactor) sqlkit.ActivityDialect {
	return sqlkit.ActivityDialect{
		Inspect: func(ctx context.Context, table string) (string, map[string]string, map[string]bool, error) {
			return inspectActivities(ctx, db, table)
		},
		Exec: func(ctx context.Context, q string, args ...any) error {
			_, err := db.ExecContext(ctx, q, args...)
			return err
		},
		Exists: func(ctx context.Context, q string, args ...any) (bool, error) {
			var one int
			err := db.QueryRowContext(ctx, q, args...).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return false, nil
			}
			return err == nil, err
		},
		Quote: quote,
		Param: func(int, string) string { return "?" },
		Upsert: func(key string, cols []string) string {
			if len(cols) == 0 {
				cols = []string{key}
			}
			set := make([]string, len(cols))
			for i, c := range cols {
				set[i] = quote(c) + " = VALUES(" + quote(c) + ")"
			}
			return "ON DUPLICATE KEY UPDATE " + strings.Join(set, ", ")
		},
		TimeFormat: "2006-01-02 15:04:05.999999",
		Refusal:    refusal,
		Redact:     red.Redact,
	}
}

// inspectActivities reads the table's columns and the columns that alone
// make a unique index (the primary key included). table is "name" in the
// connection's database, or "db.name".
func inspectActivities(ctx context.Context, db *sql.DB, table string) (string, map[string]string, map[string]bool, error) {
	schema, name, qualified := strings.Cut(table, ".")
	if !qualified {
		schema, name = "", table
	}
	dbExpr := "DATABASE()"
	args := []any{name}
	if qualified {
		dbExpr = "?"
		args = []any{schema, name}
	}
	cols, unique := map[string]string{}, map[string]bool{}
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = `+dbExpr+` AND TABLE_NAME = ?`, args...)
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
	rows, err = db.QueryContext(ctx, `SELECT MIN(COLUMN_NAME) FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = `+dbExpr+` AND TABLE_NAME = ? AND NON_UNIQUE = 0
		GROUP BY INDEX_NAME HAVING COUNT(*) = 1`, args...)
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
	sqlName := quote(name)
	if qualified {
		sqlName = quote(schema) + "." + sqlName
	}
	return sqlName, cols, unique, rows.Err()
}

// ActivityKinds returns calls and messages.
func (s *Source) ActivityKinds() []connector.ActivityKind { return s.acts.ActivityKinds() }

// FindActivity returns key when the activities table has its row.
func (s *Source) FindActivity(ctx context.Context, kind connector.ActivityKind, key, recordID string) (string, error) {
	if err := s.guard.Usable(ctx); err != nil {
		return "", err
	}
	return s.acts.FindActivity(ctx, kind, key, recordID)
}

// WriteActivity writes the activity's row (an upsert on the key).
func (s *Source) WriteActivity(ctx context.Context, id string, a connector.Activity) (string, error) {
	if err := s.guard.Usable(ctx); err != nil {
		return "", err
	}
	return s.acts.WriteActivity(ctx, id, a)
}

// CheckActivities inspects the activities table (syncd validate).
func (s *Source) CheckActivities(ctx context.Context) error { return s.acts.Check(ctx) }

// TableShapes lists the tables of the DSN's database with their columns
// and unique columns, for `syncd init` to find an activities table among
// them.
func TableShapes(ctx context.Context, dsn string) ([]sqlkit.TableShape, error) {
	db, _, red, err := openInspection(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME LIMIT 500`)
	if err != nil {
		return nil, red.Redact(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, red.Redact(err)
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, red.Redact(err)
	}
	var out []sqlkit.TableShape
	for _, n := range names {
		_, cols, unique, err := inspectActivities(ctx, db, n)
		if err != nil {
			return nil, red.Redact(err)
		}
		out = append(out, sqlkit.TableShape{Name: n, Types: cols, Unique: unique})
	}
	return out, nil
}
