package mysql

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/syncd-io/syncd/connector"
)

// rowDecoder turns binlog row images into records equal to the ones the
// reads of poll mode make of the same rows: each value is first put in
// the text form the server gives a SELECT (the binlog carries binary
// values: integers without their signedness, ENUM and SET as numbers,
// BIT as an integer), then read as page reads it. Row images carry no
// column names (binlog_row_metadata is NO_LOG or MINIMAL by default), so
// a value's column is the one at its position in the table's catalog.
type rowDecoder struct {
	s *Source
	// cols are the table's columns in catalog order, as last read.
	cols []column
	// at is the position of each column the connector reads, by name.
	at map[string]int
}

func newRowDecoder(s *Source) *rowDecoder {
	d := &rowDecoder{s: s}
	d.layout(s.tbl.columns)
	return d
}

// layout takes the table's columns in catalog order.
func (d *rowDecoder) layout(cols []column) {
	d.cols = cols
	d.at = make(map[string]int, len(cols))
	for i, c := range cols {
		d.at[c.name] = i
	}
}

// reload reads the table's columns again (after an ALTER TABLE in the
// stream) and checks that every column the connector reads is there.
func (d *rowDecoder) reload(ctx context.Context) error {
	b := d.s.binlog
	t, err := loadTable(ctx, d.s.db, b.settings, d.s.tbl.schema, d.s.tbl.loc, b.fields)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s changed under the settings or the mapping: %v: restore the column(s), or change the mapping and settings not to use them: %w",
			d.s.tbl.name, d.s.red.Redact(err), ErrColumnGone)
	}
	d.layout(t.columns)
	return nil
}

// fits reports whether a table map event describes the columns as last
// read: their number and, for each, a binlog type its catalog type
// gives.
func (d *rowDecoder) fits(m *replication.TableMapEvent) bool {
	if int(m.ColumnCount) != len(d.cols) {
		return false
	}
	if names := m.ColumnNameString(); len(names) == len(d.cols) {
		for i, n := range names {
			if n != d.cols[i].name {
				return false
			}
		}
	}
	return true
}

// records returns the records of one rows event: inserts, updates (the
// after image; a changed id also deletes the old one) and deletes (the
// before image, whole with binlog_row_image=FULL).
func (d *rowDecoder) records(e *replication.RowsEvent) ([]connector.Record, error) {
	var out []connector.Record
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
		for _, row := range e.Rows {
			rec, err := d.record(row)
			if err != nil {
				return nil, err
			}
			out = append(out, rec)
		}
	case replication.EnumRowsEventTypeUpdate:
		for i := 0; i+1 < len(e.Rows); i += 2 {
			before, err := d.record(e.Rows[i])
			if err != nil {
				return nil, err
			}
			after, err := d.record(e.Rows[i+1])
			if err != nil {
				return nil, err
			}
			if before.ID != after.ID {
				before.Deleted, before.Invalid = true, nil
				out = append(out, before)
			}
			out = append(out, after)
		}
	case replication.EnumRowsEventTypeDelete:
		for _, row := range e.Rows {
			rec, err := d.record(row)
			if err != nil {
				return nil, err
			}
			rec.Deleted, rec.Invalid = true, nil
			out = append(out, rec)
		}
	}
	return out, nil
}

// record is the record of one row image.
func (d *rowDecoder) record(row []any) (connector.Record, error) {
	t := d.s.tbl
	value := func(name string) (column, sql.NullString, error) {
		i, ok := d.at[name]
		if !ok || i >= len(row) {
			return column{}, sql.NullString{}, fmt.Errorf("read %s: column %s is not in the binlog's row: %w", t.name, name, ErrColumnGone)
		}
		v, err := binlogText(d.cols[i], row[i])
		return d.cols[i], v, err
	}
	_, id, err := value(t.id.name)
	if err != nil {
		return connector.Record{}, err
	}
	if !id.Valid {
		return connector.Record{}, fmt.Errorf("read %s: a row without %s", t.name, t.id.name)
	}
	rec := connector.Record{ID: id.String, Fields: make(map[string]any, len(t.fetch))}
	if uc, u, err := value(t.updated.name); err != nil {
		return rec, err
	} else if u.Valid && uc.kind.isTime() {
		rec.UpdatedAt, _ = t.parseTime(uc, u.String)
	}
	if t.deleted != nil {
		dc, del, err := value(t.deleted.name)
		if err != nil {
			return rec, err
		}
		rec.Deleted = del.Valid && (dc.kind != kindBool || (del.String != "0" && del.String != ""))
	}
	for _, f := range t.fetch {
		c, v, err := value(f.name)
		if errors.Is(err, ErrColumnGone) {
			return rec, err
		}
		var gv any
		if err == nil {
			gv, err = t.goValue(c, v)
		}
		if err != nil {
			// As page does: a dead letter naming the column, its id kept.
			rec.Invalid = fmt.Errorf("column %s: %w", f.name, err)
			rec.Fields = map[string]any{}
			if v, ok := idValue(t, rec.ID); ok {
				rec.Fields[t.id.name] = v
			}
			break
		}
		rec.Fields[f.name] = gv
	}
	return rec, nil
}

// binlogText is a binlog value of column c in the text form a SELECT
// gives it.
func binlogText(c column, v any) (sql.NullString, error) {
	text := func(s string) (sql.NullString, error) { return sql.NullString{String: s, Valid: true}, nil }
	switch v := v.(type) {
	case nil:
		return sql.NullString{}, nil
	case string:
		return text(v)
	case []byte:
		return text(string(v))
	case float32:
		return text(strconv.FormatFloat(float64(v), 'g', -1, 32))
	case float64:
		return text(strconv.FormatFloat(v, 'g', -1, 64))
	case int8:
		return intText(c.typ, int64(v), 8)
	case int16:
		return intText(c.typ, int64(v), 16)
	case int32:
		return intText(c.typ, int64(v), intBits(c.typ, 32))
	case int64:
		return intText(c.typ, v, 64)
	case int:
		return text(strconv.Itoa(v)) // YEAR
	}
	return sql.NullString{}, fmt.Errorf("binlog value of type %T", v)
}

// intBits is the width of a 32-bit binlog integer: MEDIUMINT travels in
// 24 bits.
func intBits(typ string, bits uint) uint {
	if strings.HasPrefix(strings.ToLower(typ), "mediumint") {
		return 24
	}
	return bits
}

// intText writes an integer of column type colType: ENUM and SET
// numbers as their labels, BIT as its bytes, unsigned columns' values as
// unsigned.
func intText(colType string, n int64, bits uint) (sql.NullString, error) {
	text := func(s string) (sql.NullString, error) { return sql.NullString{String: s, Valid: true}, nil }
	typ := strings.ToLower(colType)
	switch {
	case strings.HasPrefix(typ, "enum("):
		labels := typeLabels(colType)
		if n == 0 {
			return text("") // the error value of an invalid ENUM
		}
		if n < 0 || int(n) > len(labels) {
			return sql.NullString{}, fmt.Errorf("ENUM value %d out of %s", n, typ)
		}
		return text(labels[n-1])
	case strings.HasPrefix(typ, "set("):
		var in []string
		for i, l := range typeLabels(colType) {
			if i < 64 && uint64(n)&(1<<uint(i)) != 0 {
				in = append(in, l)
			}
		}
		return text(strings.Join(in, ","))
	case strings.HasPrefix(typ, "bit("):
		var width int
		_, _ = fmt.Sscanf(typ, "bit(%d)", &width)
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(n))
		size := min(max((width+7)/8, 1), 8)
		return text(string(b[8-size:]))
	case strings.Contains(typ, "unsigned") && n < 0:
		u := uint64(n)
		if bits < 64 {
			u &= 1<<bits - 1
		}
		return text(strconv.FormatUint(u, 10))
	}
	return text(strconv.FormatInt(n, 10))
}

// typeLabels are the values of an enum('a','b') or set('a','b') column
// type, ” inside one read as '.
func typeLabels(typ string) []string {
	open := strings.IndexByte(typ, '(')
	if open < 0 {
		return nil
	}
	var (
		out  []string
		cur  strings.Builder
		in   bool
		body = typ[open+1:]
	)
	for i := 0; i < len(body); i++ {
		ch := body[i]
		switch {
		case in && ch == '\'' && i+1 < len(body) && body[i+1] == '\'':
			cur.WriteByte('\'')
			i++
		case in && ch == '\'':
			in = false
			out = append(out, cur.String())
			cur.Reset()
		case in:
			cur.WriteByte(ch)
		case ch == '\'':
			in = true
		}
	}
	return slices.Clip(out)
}
