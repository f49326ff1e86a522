package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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

// writer is the table's sqlkit.Writer.
type writer struct{ s *Source }

func (w writer) Pool() querier { return w.s.pool }

func (w writer) Begin(ctx context.Context) (querier, func(context.Context) error, func(context.Context) error, error) {
	tx, err := w.s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return tx, tx.Commit, tx.Rollback, nil
}

func (w writer) Apply(ctx context.Context, db querier, c connector.Change) (string, error) {
	return w.s.apply(ctx, db, c)
}

func (w writer) MaybeSent(err error) bool { return maybeSent(err) }

func (w writer) ChangeError(c connector.Change, err error) error { return w.s.changeError(c, err) }

// querier is what a change's statements run on: the pool (a statement
// per transaction) or one transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// apply runs one change on db and returns the record's ID.
func (s *Source) apply(ctx context.Context, db querier, c connector.Change) (string, error) {
	switch c.Op {
	case connector.OpCreate:
		return s.create(ctx, db, c.Fields)
	case connector.OpUpdate:
		return c.ID, s.update(ctx, db, c.ID, c.Fields, c.IfUnchangedSince)
	case connector.OpDelete:
		return c.ID, s.delete(ctx, db, c.ID, c.Soft, c.IfUnchangedSince)
	}
	return c.ID, fmt.Errorf("%w: unknown write op %d", connector.ErrInvalidChange, c.Op)
}

// assignments returns the columns of fields (sorted by name, so that one
// set of fields is one statement) with their values as text and the
// casts that turn them into the columns' types, numbering parameters
// from first.
func (s *Source) assignments(fields map[string]any, first int) (cols, exprs []string, args []any, err error) {
	for i, name := range sqlkit.SortedNames(fields) {
		c, ok := s.tbl.column(name)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%w: no column %q", connector.ErrInvalidChange, name)
		}
		v, err := textValue(fields[name], c)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("column %s: %w: %w", c.name, connector.ErrInvalidChange, err)
		}
		cols = append(cols, c.ident)
		exprs = append(exprs, fmt.Sprintf("$%d::text::%s", first+i, c.typ))
		args = append(args, v)
	}
	return cols, exprs, args, nil
}

func (s *Source) create(ctx context.Context, db querier, fields map[string]any) (string, error) {
	cols, exprs, args, err := s.assignments(fields, 1)
	if err != nil {
		return "", err
	}
	q := "INSERT INTO " + s.tbl.name + " DEFAULT VALUES"
	if len(cols) > 0 {
		q = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", s.tbl.name, strings.Join(cols, ", "), strings.Join(exprs, ", "))
	}
	var id *string
	if err := db.QueryRow(ctx, q+" RETURNING "+s.tbl.id.ident+"::text", args...).Scan(&id); err != nil {
		if maybeSent(err) {
			// The connection failed after the insert may have been sent:
			// it may have been committed.
			return "", fmt.Errorf("%w: %w", connector.ErrOutcomeUnknown, err)
		}
		return "", err
	}
	if id == nil {
		return "", fmt.Errorf("insert returned no %s", s.tbl.id.name)
	}
	return *id, nil
}

// live is the condition of a row that is not soft-deleted.
func (s *Source) live() string {
	d := s.tbl.deleted
	switch {
	case d == nil:
		return "true"
	case d.kind == kindBool:
		return d.ident + " IS NOT TRUE"
	}
	return d.ident + " IS NULL"
}

// update sets the fields of a live row. When since is not zero and the
// table's updatedAtColumn holds times, the row must still have that
// change time (as Get reads it), else nothing is written and the error is
// connector.ErrChanged.
func (s *Source) update(ctx context.Context, db querier, id string, fields map[string]any, since time.Time) error {
	cols, exprs, args, err := s.assignments(fields, 2)
	if err != nil {
		return err
	}
	where := fmt.Sprintf(" WHERE %s = $1::%s AND %s", s.tbl.id.ident, s.tbl.id.typ, s.live())
	cond := ""
	if u := s.tbl.updated; !since.IsZero() && u.kind.isTime() {
		cond = fmt.Sprintf(" AND %s::timestamptz = $%d::timestamptz", u.ident, len(args)+2)
		args = append(args, since)
	}
	if len(cols) == 0 {
		var found bool
		if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.tbl.name+where+")", id).Scan(&found); err != nil {
			return err
		}
		if !found {
			return connector.ErrNotFound
		}
		return nil
	}
	sets := make([]string, len(cols))
	for i := range cols {
		sets[i] = cols[i] + " = " + exprs[i]
	}
	tag, err := db.Exec(ctx, "UPDATE "+s.tbl.name+" SET "+strings.Join(sets, ", ")+where+cond, append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	if cond != "" {
		var found bool
		if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.tbl.name+where+")", id).Scan(&found); err != nil {
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
// first mark and succeeds; removing a missing row is ErrNotFound. When
// since is not zero and the table's updatedAtColumn holds times, a live
// row must still have that change time, else nothing is deleted and the
// error is connector.ErrChanged (an edit made after the deletion was
// weighed is weighed too).
func (s *Source) delete(ctx context.Context, db querier, id string, soft bool, since time.Time) error {
	byID := fmt.Sprintf(" WHERE %s = $1::%s", s.tbl.id.ident, s.tbl.id.typ)
	args := []any{id}
	cond := ""
	if u := s.tbl.updated; !since.IsZero() && u.kind.isTime() {
		cond = fmt.Sprintf(" AND %s::timestamptz = $2::timestamptz", u.ident)
		args = append(args, since)
	}
	q := "DELETE FROM " + s.tbl.name + byID + cond
	d := s.tbl.deleted
	if soft && d != nil {
		mark := "now()"
		if d.kind == kindBool {
			mark = "true"
		}
		q = "UPDATE " + s.tbl.name + " SET " + d.ident + " = " + mark + byID + " AND " + s.live() + cond
	}
	tag, err := db.Exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var found, live bool
	if err := db.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.tbl.name+byID+"), EXISTS (SELECT 1 FROM "+s.tbl.name+byID+" AND "+s.live()+")", id).
		Scan(&found, &live); err != nil {
		return err
	}
	switch {
	case !found:
		return connector.ErrNotFound
	case live && cond != "":
		return connector.ErrChanged
	case !soft || d == nil:
		return connector.ErrNotFound // only soft-deleted: the table's reads skip it
	}
	return nil
}

// textValue returns a record value in the text form PostgreSQL reads for
// column c, or nil for NULL.
func textValue(v any, c column) (any, error) {
	return sqlkit.Text(v, sqlkit.Format{
		Bool: strconv.FormatBool,
		Time: func(t time.Time) string { return t.Format(time.RFC3339Nano) },
		List: func(values []string) (string, error) {
			switch {
			case c.kind == kindArray:
				return arrayLiteral(values), nil
			case c.json:
				b, err := json.Marshal(values)
				return string(b), err
			}
			return "", fmt.Errorf("a list of values for a column of type %s", c.typ)
		},
		NonFinite: func(f float64) string {
			switch {
			case math.IsInf(f, 1):
				return "Infinity"
			case math.IsInf(f, -1):
				return "-Infinity"
			}
			return "NaN"
		},
	})
}

// arrayLiteral returns the array input form of values, every element
// quoted.
func arrayLiteral(values []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}
