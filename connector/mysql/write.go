package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Write applies the changes in order with sqlkit.Write: several in one
// transaction, each alone when that fails; a failing change has its Err
// set and the others go on. The call as a whole fails only when ctx is
// done or the source closed before any change was tried.
func (s *Source) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return sqlkit.Write[querier](ctx, writer{s}, changes), nil
}

// querier is what a change's statements run on: the pool (a statement
// per transaction, autocommit) or one transaction.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// writer is the table's sqlkit.Writer.
type writer struct{ s *Source }

func (w writer) Pool() querier { return w.s.wdb }

func (w writer) Begin(ctx context.Context) (querier, func(context.Context) error, func(context.Context) error, error) {
	tx, err := w.s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	return tx, func(context.Context) error { return tx.Commit() }, func(context.Context) error { return tx.Rollback() }, nil
}

func (w writer) Apply(ctx context.Context, db querier, c connector.Change) (string, error) {
	switch c.Op {
	case connector.OpCreate:
		return w.s.create(ctx, db, c.Fields)
	case connector.OpUpdate:
		return c.ID, w.s.update(ctx, db, c.ID, c.Fields, c.IfUnchangedSince)
	case connector.OpDelete:
		return c.ID, w.s.delete(ctx, db, c.ID, c.Soft, c.IfUnchangedSince)
	}
	return c.ID, fmt.Errorf("%w: unknown write op %d", connector.ErrInvalidChange, c.Op)
}

func (w writer) MaybeSent(err error) bool { return maybeSent(err) }

func (w writer) ChangeError(c connector.Change, err error) error { return w.s.changeError(c, err) }

// assignments returns the quoted columns of fields (sorted by name),
// their placeholders and their values as text.
func (s *Source) assignments(fields map[string]any) (cols, phs []string, args []any, err error) {
	for _, name := range sqlkit.SortedNames(fields) {
		c, ok := s.tbl.column(name)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%w: no column %q", connector.ErrInvalidChange, name)
		}
		v, err := s.tbl.textValue(fields[name], c)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("column %s: %w: %w", c.name, connector.ErrInvalidChange, err)
		}
		cols = append(cols, c.ident)
		phs = append(phs, s.wparam(c))
		args = append(args, v)
	}
	return cols, phs, args, nil
}

// wparam is the placeholder of a value of column c in a write. A
// TIMESTAMP's value is UTC text: in a write session of another zone it is
// converted to that zone, which the server converts back to UTC to store
// it (exact but for the hour a daylight saving change repeats).
func (s *Source) wparam(c column) string {
	if c.kind == kindTimestamp && s.wdb != s.db {
		return "CONVERT_TZ(?, '+00:00', @@session.time_zone)"
	}
	return "?"
}

// create inserts a row and returns its id: from RETURNING on MariaDB,
// LAST_INSERT_ID() for an AUTO_INCREMENT id on MySQL, or the id the
// change carries.
func (s *Source) create(ctx context.Context, db querier, fields map[string]any) (string, error) {
	cols, phs, args, err := s.assignments(fields)
	if err != nil {
		return "", err
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", s.tbl.name, strings.Join(cols, ", "), strings.Join(phs, ", "))
	sent := func(err error) error {
		if maybeSent(err) {
			// The connection failed after the insert may have been sent:
			// it may have been committed.
			return fmt.Errorf("%w: %w", connector.ErrOutcomeUnknown, err)
		}
		return err
	}
	if s.returning {
		var id sql.NullString
		if err := db.QueryRowContext(ctx, q+" RETURNING CAST("+s.tbl.id.ident+" AS CHAR)", args...).Scan(&id); err != nil {
			return "", sent(err)
		}
		if !id.Valid {
			return "", fmt.Errorf("insert returned no %s", s.tbl.id.name)
		}
		return id.String, nil
	}
	given, hasID := "", false
	for name, v := range fields {
		if c, ok := s.tbl.column(name); ok && c.name == s.tbl.id.name && v != nil {
			given, hasID = fmt.Sprint(v), true
		}
	}
	if !hasID && !s.tbl.id.autoInc {
		return "", fmt.Errorf("%w: %s is not AUTO_INCREMENT and this server has no INSERT ... RETURNING: map a value to it", connector.ErrInvalidChange, s.tbl.id.name)
	}
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return "", sent(err)
	}
	if hasID {
		return given, nil
	}
	n, err := res.LastInsertId()
	if err != nil {
		return "", fmt.Errorf("%w: last insert id: %w", connector.ErrOutcomeUnknown, err)
	}
	return strconv.FormatUint(uint64(n), 10), nil
}

// update sets the fields of a live row. When since is not zero and the
// table's updatedAtColumn holds times, the row must still have that
// change time (as Get reads it), else nothing is written and the error is
// connector.ErrChanged.
func (s *Source) update(ctx context.Context, db querier, id string, fields map[string]any, since time.Time) error {
	cols, phs, args, err := s.assignments(fields)
	if err != nil {
		return err
	}
	_, live := deletedExpr(s.tbl)
	live = strings.ReplaceAll(live, rowAlias+".", "")
	where := fmt.Sprintf(" WHERE %s = %s AND %s", s.tbl.id.ident, param(s.tbl.id), live)
	exists := "SELECT EXISTS (SELECT 1 FROM " + s.tbl.name + where + ")"
	if len(cols) == 0 {
		var found bool
		if err := db.QueryRowContext(ctx, exists, id).Scan(&found); err != nil {
			return err
		}
		if !found {
			return connector.ErrNotFound
		}
		return nil
	}
	args = append(args, id)
	cond, carg := s.unchangedSince(since)
	if cond != "" {
		args = append(args, carg)
	}
	sets := make([]string, len(cols))
	for i := range cols {
		sets[i] = cols[i] + " = " + phs[i]
	}
	res, err := db.ExecContext(ctx, "UPDATE "+s.tbl.name+" SET "+strings.Join(sets, ", ")+where+cond, args...)
	if err != nil {
		return err
	}
	// The session reports matched rows (CLIENT_FOUND_ROWS), not only
	// changed ones.
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	if cond != "" {
		var found bool
		if err := db.QueryRowContext(ctx, exists, id).Scan(&found); err != nil {
			return err
		}
		if found {
			return connector.ErrChanged
		}
	}
	return connector.ErrNotFound
}

// delete removes the row, or marks it deleted when soft is asked and the
// table has a deletedAtColumn. Marking an already marked row keeps its
// first mark and succeeds; removing a missing row is ErrNotFound.
func (s *Source) delete(ctx context.Context, db querier, id string, soft bool, since time.Time) error {
	byID := fmt.Sprintf(" WHERE %s = %s", s.tbl.id.ident, param(s.tbl.id))
	_, live := deletedExpr(s.tbl)
	live = strings.ReplaceAll(live, rowAlias+".", "")
	cond, carg := s.unchangedSince(since)
	q, args := "DELETE FROM "+s.tbl.name+byID+cond, []any{id}
	d := s.tbl.deleted
	if soft && d != nil {
		var mark any = 1
		if d.kind != kindBool {
			mark = s.tbl.timeText(*d, time.Now())
		}
		q, args = "UPDATE "+s.tbl.name+" SET "+d.ident+" = "+s.wparam(*d)+byID+" AND "+live+cond, []any{mark, id}
	}
	if cond != "" {
		args = append(args, carg)
	}
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	var found, isLive bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.tbl.name+byID+"), EXISTS (SELECT 1 FROM "+s.tbl.name+byID+" AND "+live+")", id, id).
		Scan(&found, &isLive); err != nil {
		return err
	}
	switch {
	case !found:
		return connector.ErrNotFound
	case isLive && cond != "":
		return connector.ErrChanged
	case !soft || d == nil:
		return connector.ErrNotFound // only soft-deleted: the table's reads skip it
	}
	return nil
}

// unchangedSince is the condition, and its argument, that a row still
// has the change time since (as Get reads it), "" when since is zero or
// the table's updatedAtColumn holds no times.
func (s *Source) unchangedSince(since time.Time) (string, any) {
	u := s.tbl.updated
	if since.IsZero() || !u.kind.isTime() {
		return "", nil
	}
	if u.kind == kindTimestamp && s.wdb != s.db {
		// The instant itself, whatever the session's zone.
		return fmt.Sprintf(" AND UNIX_TIMESTAMP(%s) = CAST(? AS DECIMAL(20,6))", u.ident), fmt.Sprintf("%d.%06d", since.Unix(), since.Nanosecond()/1000)
	}
	return fmt.Sprintf(" AND %s = CAST(? AS DATETIME(6))", u.ident), s.tbl.timeText(u, since)
}

// timeText is a time as column c takes it: TIMESTAMP in UTC (the read
// session's zone; wparam converts it for writes), DATETIME and DATE in
// the zone of DATETIME values.
func (t *table) timeText(c column, tm time.Time) string {
	if c.kind == kindTimestamp {
		return tm.UTC().Format(cursorText)
	}
	return tm.In(t.loc).Format(cursorText)
}

// textValue returns a record value in the text form MySQL reads for
// column c, or nil for NULL: booleans as 1 and 0, times in the column's
// zone, lists as JSON for a JSON column.
func (t *table) textValue(v any, c column) (any, error) {
	return sqlkit.Text(v, sqlkit.Format{
		Bool: func(b bool) string {
			if b {
				return "1"
			}
			return "0"
		},
		Time: func(tm time.Time) string { return t.timeText(c, tm) },
		List: func(values []string) (string, error) {
			if c.kind != kindJSON {
				return "", fmt.Errorf("a list of values for a column of type %s", c.typ)
			}
			b, err := json.Marshal(values)
			return string(b), err
		},
	})
}
