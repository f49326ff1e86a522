package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/syncd-io/syncd/connector"
)

// readError is the error of a failed read: the context's when it is
// done, otherwise the statement's, without secrets.
func (s *Source) readError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("read %s: %w", s.tbl.name, s.red.redact(err))
}

// page runs one read statement and returns its records and the position
// of its last row.
func (s *Source) page(ctx context.Context, q string, args ...any) ([]connector.Record, position, error) {
	return s.pageOn(ctx, s.pool, q, args...)
}

// reader runs a read statement: the pool, or a transaction reading in a
// snapshot exported by a replication slot.
type reader interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// pageOn is page on db.
func (s *Source) pageOn(ctx context.Context, db reader, q string, args ...any) ([]connector.Record, position, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, position{}, s.readError(ctx, err)
	}
	defer rows.Close()
	var (
		id, cursor pgtype.Text
		deleted    bool
		updatedAt  *time.Time
		values     = make([]any, len(s.tbl.fetch))
		dest       = make([]any, 0, fixedColumns+len(s.tbl.fetch))
		recs       []connector.Record
		last       position
	)
	dest = append(dest, &id, &cursor, &deleted, &updatedAt)
	for i, c := range s.tbl.fetch {
		values[i] = newScanValue(c.kind)
		dest = append(dest, values[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, position{}, s.readError(ctx, err)
		}
		rec := connector.Record{
			ID:      id.String,
			Fields:  make(map[string]any, len(s.tbl.fetch)),
			Deleted: deleted,
		}
		if updatedAt != nil {
			rec.UpdatedAt = *updatedAt
		}
		for i, c := range s.tbl.fetch {
			rec.Fields[c.name] = goValue(values[i])
		}
		recs = append(recs, rec)
		rowID := id.String
		last = position{U: cursor.String, ID: &rowID}
	}
	if err := rows.Err(); err != nil {
		return nil, position{}, s.readError(ctx, err)
	}
	return recs, last, nil
}

// newScanValue returns a scan destination for a column of kind k.
func newScanValue(k kind) any {
	switch k {
	case kindBool:
		return new(pgtype.Bool)
	case kindInt:
		return new(pgtype.Int8)
	case kindFloat, kindFloat4:
		return new(pgtype.Float8)
	case kindTimestamptz:
		return new(pgtype.Timestamptz)
	case kindTimestamp:
		return new(pgtype.Timestamp)
	case kindDate:
		return new(pgtype.Date)
	case kindArray:
		return new([]pgtype.Text)
	}
	return new(pgtype.Text)
}

// goValue turns a scanned value into one of the record value types:
// string, int64, float64, bool, time.Time, []string or nil. Infinite
// times become the strings "infinity" and "-infinity"; NULL elements of
// arrays become "".
func goValue(v any) any {
	switch v := v.(type) {
	case *pgtype.Bool:
		if v.Valid {
			return v.Bool
		}
	case *pgtype.Int8:
		if v.Valid {
			return v.Int64
		}
	case *pgtype.Float8:
		if v.Valid {
			return v.Float64
		}

	case *pgtype.Timestamptz:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *pgtype.Timestamp:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *pgtype.Date:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *[]pgtype.Text:
		if *v == nil {
			return nil
		}
		out := make([]string, len(*v))
		for i, e := range *v {
			out[i] = e.String
		}
		return out
	case *pgtype.Text:
		if v.Valid {
			return v.String
		}
	}
	return nil
}

// timeValue is a time in UTC (pgx gives timestamptz values in the
// process's zone, or in the offset of their text), so that every reader
// gives the same value whatever the zones of the server, the session
// and the process.
func timeValue(t time.Time, inf pgtype.InfinityModifier) any {
	switch inf {
	case pgtype.Infinity:
		return "infinity"
	case pgtype.NegativeInfinity:
		return "-infinity"
	}
	return t.UTC()
}

// spellBools spells the elements of a boolean[] read from its text form
// (t, f) as its cast to text[] does (true, false).
func spellBools(v any) {
	list, _ := v.([]string)
	for i, e := range list {
		switch e {
		case "t":
			list[i] = "true"
		case "f":
			list[i] = "false"
		}
	}
}

// unpad drops the trailing blanks of a character(n) value, as its cast
// to text does.
func unpad(c column, v any) any {
	if !c.padded {
		return v
	}
	switch v := v.(type) {
	case string:
		return strings.TrimRight(v, " ")
	case []string:
		for i, e := range v {
			v[i] = strings.TrimRight(e, " ")
		}
	}
	return v
}
