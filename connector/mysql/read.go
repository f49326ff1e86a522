package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// readError is the error of a failed read: the context's when it is
// done, otherwise the statement's, without secrets.
func (s *Source) readError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("read %s: %w", s.tbl.name, s.red.Redact(err))
}

// queryer runs reads: the pool, or the connection of a consistent
// snapshot.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// page runs one read statement and returns its records and the position
// of its last row.
func (s *Source) page(ctx context.Context, q string, args ...any) ([]connector.Record, sqlkit.Position, error) {
	return s.pageOn(ctx, s.db, q, args...)
}

// pageOn is page on db.
func (s *Source) pageOn(ctx context.Context, db queryer, q string, args ...any) ([]connector.Record, sqlkit.Position, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sqlkit.Position{}, s.readError(ctx, err)
	}
	defer rows.Close()
	var (
		id, cursor string
		deleted    bool
		values     = make([]sql.NullString, len(s.tbl.fetch))
		dest       = make([]any, 0, fixedColumns+len(s.tbl.fetch))
		recs       []connector.Record
		last       sqlkit.Position
	)
	dest = append(dest, &id, &cursor, &deleted)
	for i := range values {
		dest = append(dest, &values[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, sqlkit.Position{}, s.readError(ctx, err)
		}
		rec := connector.Record{ID: id, Fields: make(map[string]any, len(s.tbl.fetch)), Deleted: deleted}
		if s.tbl.updated.kind.isTime() {
			rec.UpdatedAt, _ = s.tbl.parseTime(s.tbl.updated, cursor)
		}
		for i, c := range s.tbl.fetch {
			v, err := s.tbl.goValue(c, values[i])
			if err != nil {
				// The record cannot be read whole: it becomes a dead
				// letter naming the column; its id alone is kept.
				rec.Invalid = fmt.Errorf("column %s: %w", c.name, err)
				rec.Fields = map[string]any{}
				if v, ok := idValue(s.tbl, id); ok {
					rec.Fields[s.tbl.id.name] = v
				}
				break
			}
			rec.Fields[c.name] = v
		}
		recs = append(recs, rec)
		rowID := id
		last = sqlkit.Position{U: cursor, ID: &rowID}
	}
	if err := rows.Err(); err != nil {
		return nil, sqlkit.Position{}, s.readError(ctx, err)
	}
	return recs, last, nil
}

// idValue is the id as a record value, when the id column is among the
// fetched ones.
func idValue(t *table, id string) (any, bool) {
	for _, c := range t.fetch {
		if c.name == t.id.name {
			v, err := t.goValue(c, sql.NullString{String: id, Valid: true})
			return v, err == nil
		}
	}
	return nil, false
}

// errZeroDate is the error of a zero date ('0000-00-00'), which names no
// day and is read as no time.
var errZeroDate = fmt.Errorf("zero date (0000-00-00) is not a date: set a real date or NULL in the row")

// goValue turns a column's text into one of the record value types:
// string, int64, float64, bool, time.Time or nil.
func (t *table) goValue(c column, v sql.NullString) (any, error) {
	if !v.Valid {
		return nil, nil
	}
	switch c.kind {
	case kindBool:
		n, err := strconv.ParseInt(v.String, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("boolean %q: %w", v.String, err)
		}
		return n != 0, nil
	case kindInt:
		if n, err := strconv.ParseInt(v.String, 10, 64); err == nil {
			return n, nil
		}
		return v.String, nil // an unsigned BIGINT beyond int64 stays exact as text
	case kindFloat:
		f, err := strconv.ParseFloat(v.String, 64)
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", v.String, err)
		}
		return f, nil
	case kindTimestamp, kindDatetime, kindDate:
		return t.parseTime(c, v.String)
	}
	return v.String, nil
}

// parseTime reads a time column's text: TIMESTAMP in UTC (the read
// session's zone), DATETIME in the DATETIME values' zone, DATE as
// midnight UTC.
func (t *table) parseTime(c column, text string) (time.Time, error) {
	if strings.HasPrefix(text, "0000-00-00") {
		return time.Time{}, errZeroDate
	}
	loc := time.UTC
	if c.kind == kindDatetime {
		loc = t.loc
	}
	layout := "2006-01-02 15:04:05.999999"
	if len(text) == len("2006-01-02") {
		layout = "2006-01-02"
	}
	tm, err := time.ParseInLocation(layout, text, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid date %q (a zero month or day?): set a real date or NULL in the row", text)
	}
	return tm, nil
}
