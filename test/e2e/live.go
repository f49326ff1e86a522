package e2e

import (
	"context"
	"fmt"
)

// The statements a driver editing the table under load makes (the soak):
// each bounded by its context, its error returned rather than failing
// the test, and an edit or delete of a row gone (or soft-deleted) told
// apart from one applied.

// EditLive sets one column of a live row; applied is false when the row
// is gone or soft-deleted. The value must differ from the row's (MySQL
// counts only rows it changed).
func (tb *Table) EditLive(ctx context.Context, id int64, column, value string) (applied bool, err error) {
	switch column {
	case "first_name", "last_name", "company", "email", "phone":
	default:
		return false, fmt.Errorf("no column %q", column)
	}
	n, err := tb.db.affect(ctx, fmt.Sprintf(`UPDATE %s SET %s = %s WHERE id = %s AND deleted_at IS NULL`,
		tb.Name, column, tb.Dialect.param(1), tb.Dialect.param(2)), value, id)
	return n > 0, err
}

// InsertLive adds a row and returns its id (an empty phone is NULL).
func (tb *Table) InsertLive(ctx context.Context, v Values) (int64, error) {
	var id int64
	err := tb.db.each(ctx, fmt.Sprintf(`INSERT INTO %s (first_name, last_name, company, email, phone)
		VALUES (%s, NULLIF(%s, '')) RETURNING id`, tb.Name, tb.Dialect.params(1, 4), tb.Dialect.param(5)), []any{v.First, v.Last, v.Company, v.Email, v.Phone},
		func(scan func(...any) error) error { return scan(&id) })
	return id, err
}

// SoftDeleteLive marks a live row deleted; applied is false when it was
// gone or soft-deleted already.
func (tb *Table) SoftDeleteLive(ctx context.Context, id int64) (applied bool, err error) {
	n, err := tb.db.affect(ctx, fmt.Sprintf(`UPDATE %s SET deleted_at = %s WHERE id = %s AND deleted_at IS NULL`,
		tb.Name, tb.Dialect.now, tb.Dialect.param(1)), id)
	return n > 0, err
}

// Count runs a query whose one row is one integer (a count).
func (tb *Table) Count(ctx context.Context, query string) (int64, error) {
	var n int64
	err := tb.db.each(ctx, query, nil, func(scan func(...any) error) error { return scan(&n) })
	return n, err
}
