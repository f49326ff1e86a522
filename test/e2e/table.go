// Package e2e holds what the end-to-end suites (test/faults, test/crash)
// share: a contacts table in the machine's PostgreSQL or MariaDB (a small
// SQL dialect seam, dialect.go), the configuration
// of a connector syncing it both ways with the workspace emulator, and the
// check that both sides agree.
package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Values are the synced fields of a record, as the table holds them (the
// phone in E.164, the e-mail in lower case, so that they read back as
// written).
type Values struct {
	First, Last, Company, Email, Phone string
}

// Row is a row of the table.
type Row struct {
	ID int64
	Values
	Deleted bool
}

// Table is a contacts table in a schema (PostgreSQL) or database
// (MySQL) of its own, dropped at the test's end. Its id is an identity
// column (syncd's creates take the next one); updated_at moves on every
// INSERT and UPDATE, as applications' tables commonly do, so that syncd's
// own writes are seen by its change cursor too; deleted_at marks soft
// deletes.
type Table struct {
	// Dialect is the table's server.
	Dialect *Dialect
	// Name is qualified by its schema or database.
	Name string
	// DSN is syncd's address of the table's database (ConfigOptions.DSN).
	DSN string
	// Pool is the PostgreSQL table's connection pool (nil for MySQL).
	Pool *pgxpool.Pool
	// Audit is the PostgreSQL table where a trigger records every INSERT
	// and UPDATE of a row: when, by which application_name (syncd's DSN
	// from WriteConfig sets "syncd"), and the row before and after.
	Audit string
	db    sqlDB
	t     testing.TB
}

// NewTable creates the table in PostgreSQL.
func NewTable(t testing.TB) *Table {
	t.Helper()
	return NewTableIn(t, PostgreSQL)
}

// NewTableIn creates the table in d's server.
func NewTableIn(t testing.TB, d *Dialect) *Table {
	t.Helper()
	tb := &Table{Dialect: d, t: t}
	d.create(t, tb)
	return tb
}

// Exec runs a statement written in SQL both servers read (no
// parameters), such as an UPDATE of rows chosen by id.
func (tb *Table) Exec(query string) {
	tb.t.Helper()
	if err := tb.db.exec(ctxT(), query); err != nil {
		tb.t.Fatalf("exec %q: %v", query, err)
	}
}

// Insert adds a row and returns its id.
func (tb *Table) Insert(v Values) int64 {
	tb.t.Helper()
	var id int64
	err := tb.db.each(ctxT(), fmt.Sprintf(`INSERT INTO %s (first_name, last_name, company, email, phone)
		VALUES (%s) RETURNING id`, tb.Name, tb.Dialect.params(1, 5)), []any{v.First, v.Last, v.Company, v.Email, v.Phone},
		func(scan func(...any) error) error { return scan(&id) })
	if err != nil {
		tb.t.Fatalf("insert: %v", err)
	}
	return id
}

// InsertN adds n rows, gen(i) giving the i-th (from 1), in statements of
// up to 500 rows.
func (tb *Table) InsertN(n int, gen func(i int) Values) {
	tb.t.Helper()
	const page = 500
	for lo := 1; lo <= n; lo += page {
		var (
			tuples []string
			args   []any
		)
		for i := lo; i < lo+page && i <= n; i++ {
			v := gen(i)
			tuples = append(tuples, "("+tb.Dialect.params(len(args)+1, 5)+")")
			args = append(args, v.First, v.Last, v.Company, v.Email, v.Phone)
		}
		if err := tb.db.exec(ctxT(), fmt.Sprintf(`INSERT INTO %s (first_name, last_name, company, email, phone) VALUES %s`,
			tb.Name, strings.Join(tuples, ", ")), args...); err != nil {
			tb.t.Fatalf("insert %d rows: %v", n, err)
		}
	}
}

// Set changes one column of a row, as an application would.
func (tb *Table) Set(id int64, column, value string) {
	tb.t.Helper()
	switch column {
	case "first_name", "last_name", "company", "email", "phone":
	default:
		tb.t.Fatalf("no column %q", column)
	}
	if err := tb.db.exec(ctxT(), fmt.Sprintf(`UPDATE %s SET %s = %s WHERE id = %s`, tb.Name, column, tb.Dialect.param(1), tb.Dialect.param(2)), value, id); err != nil {
		tb.t.Fatalf("update: %v", err)
	}
}

// SoftDelete marks a row deleted.
func (tb *Table) SoftDelete(id int64) {
	tb.t.Helper()
	if err := tb.db.exec(ctxT(), fmt.Sprintf(`UPDATE %s SET deleted_at = %s WHERE id = %s`, tb.Name, tb.Dialect.now, tb.Dialect.param(1)), id); err != nil {
		tb.t.Fatalf("soft delete: %v", err)
	}
}

// Rows returns every row, soft-deleted ones included, by id.
func (tb *Table) Rows() []Row {
	tb.t.Helper()
	out, err := tb.RowsLive(ctxT())
	if err != nil {
		tb.t.Fatalf("%v", err)
	}
	return out
}

// RowsLive is Rows bounded by ctx, its error returned.
func (tb *Table) RowsLive(ctx context.Context) ([]Row, error) {
	var out []Row
	err := tb.db.each(ctx, fmt.Sprintf(`SELECT id, coalesce(first_name, ''), coalesce(last_name, ''),
		coalesce(company, ''), coalesce(email, ''), coalesce(phone, ''), deleted_at IS NOT NULL FROM %s ORDER BY id`, tb.Name), nil,
		func(scan func(...any) error) error {
			var r Row
			if err := scan(&r.ID, &r.First, &r.Last, &r.Company, &r.Email, &r.Phone, &r.Deleted); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	return out, nil
}

// History returns the audit of one row, oldest first, one line each
// (PostgreSQL tables only).
func (tb *Table) History(id int64) []string {
	tb.t.Helper()
	if tb.Pool == nil {
		tb.t.Fatalf("History: a %s table keeps no audit", tb.Dialect.Type)
	}
	rows, err := tb.Pool.Query(ctxT(), fmt.Sprintf(`SELECT to_char(at, 'HH24:MI:SS.US'), who, op, coalesce(old::text, ''), new::text
		FROM %s WHERE row_id = $1 ORDER BY seq`, tb.Audit), id)
	if err != nil {
		tb.t.Fatalf("read audit: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var at, who, op, old, new string
		if err := rows.Scan(&at, &who, &op, &old, &new); err != nil {
			tb.t.Fatalf("read audit: %v", err)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s -> %s", at, who, op, old, new))
	}
	return out
}

// ByEmail returns the live row holding email, if any.
func (tb *Table) ByEmail(email string) (Row, bool) {
	for _, r := range tb.Rows() {
		if !r.Deleted && strings.EqualFold(r.Email, email) {
			return r, true
		}
	}
	return Row{}, false
}

// ctxT is the context of the helpers' statements: the test's own
// timeout bounds them.
func ctxT() context.Context { return context.Background() }
