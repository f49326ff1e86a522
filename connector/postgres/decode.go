package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// decoder turns pgoutput tuples (text format) into records equal to the
// ones the reads of poll mode make of the same rows: the same id text,
// the same value types per column kind, the same deleted flag and time.
type decoder struct {
	s     *Source
	types *pgtype.Map
	// cols are the table's columns by position in the stream, from its
	// latest relation message.
	cols []streamColumn
}

// streamColumn is one column of a relation message and its roles.
type streamColumn struct {
	name              string
	col               column
	fetched           bool
	id, updated, dead bool
}

func newDecoder(s *Source) *decoder {
	return &decoder{s: s, types: pgtype.NewMap()}
}

// relation takes the table's relation message (sent before its first
// change in a stream, and again after its columns changed) and checks
// that every column the connector reads is still there.
func (d *decoder) relation(m *pglogrepl.RelationMessage) error {
	if m.RelationID != d.s.tbl.oid {
		return nil
	}
	t := d.s.tbl
	cols := make([]streamColumn, len(m.Columns))
	present := map[string]bool{}
	for i, c := range m.Columns {
		sc := streamColumn{name: c.Name}
		if known, ok := t.column(c.Name); ok && known.name == c.Name {
			sc.col = known
		} else {
			sc.col = column{name: c.Name, kind: kindText}
		}
		if k, ok := builtinKind(c.DataType); ok {
			// The stream's own type: a column retyped since Open is read
			// as it is now.
			sc.col.kind = k
			sc.col.padded = c.DataType == pgtype.BPCharOID || c.DataType == pgtype.BPCharArrayOID
			sc.col.boolArray = c.DataType == pgtype.BoolArrayOID
		}
		sc.id = c.Name == t.id.name
		sc.updated = c.Name == t.updated.name
		sc.dead = t.deleted != nil && c.Name == t.deleted.name
		for _, f := range t.fetch {
			if f.name == c.Name {
				sc.fetched = true
			}
		}
		present[c.Name] = true
		cols[i] = sc
	}
	var gone []string
	for _, name := range append([]string{t.id.name, t.updated.name}, fieldNames(t.fetch)...) {
		if !present[name] && !slices.Contains(gone, name) {
			gone = append(gone, name)
		}
	}
	if t.deleted != nil && !present[t.deleted.name] {
		gone = append(gone, t.deleted.name)
	}
	if len(gone) > 0 {
		return fmt.Errorf("%s no longer has column(s) %q: restore them, or change the mapping and settings not to use them: %w",
			t.name, gone, ErrColumnGone)
	}
	d.cols = cols
	return nil
}

func fieldNames(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}

// records returns the records of one change: an insert (old nil), an
// update or a delete (new nil, old holding the key). An update that
// changed the key gives first the old id's record, Deleted with
// MergedInto naming the new id, so that the reconciler moves the old
// row's contact to the new id instead of creating another.
func (d *decoder) records(rel uint32, old, new *pglogrepl.TupleData) ([]connector.Record, error) {
	if d.cols == nil {
		return nil, fmt.Errorf("read %s: change before the relation message", d.s.tbl.name)
	}
	var out []connector.Record
	var oldID string
	if old != nil {
		id, ok := d.idOf(old)
		if !ok {
			return nil, fmt.Errorf("read %s: a deleted or updated row carries no %s: check the table's replica identity", d.s.tbl.name, d.s.tbl.id.name)
		}
		oldID = id
	}
	if new == nil {
		return append(out, d.deleted(oldID, old)), nil
	}
	rec, err := d.record(new, old)
	if err != nil {
		return nil, err
	}
	if old != nil && oldID != rec.ID {
		moved := d.deleted(oldID, old)
		moved.MergedInto = rec.ID
		out = append(out, moved)
	}
	return append(out, rec), nil
}

// deleted is the record of a deleted row: its id and the values the old
// tuple holds (the replica identity: the primary key, or every column
// with REPLICA IDENTITY FULL), so that a mapping taking the externalId
// from such a column finds it.
func (d *decoder) deleted(id string, old *pglogrepl.TupleData) connector.Record {
	rec := connector.Record{ID: id, Deleted: true, Fields: map[string]any{}}
	for i, c := range old.Columns {
		if i >= len(d.cols) || !d.cols[i].fetched || c.DataType != pglogrepl.TupleDataTypeText {
			continue
		}
		if v, err := d.value(d.cols[i].col, c.Data); err == nil {
			rec.Fields[d.cols[i].name] = v
		}
	}
	return rec
}

func (d *decoder) idOf(t *pglogrepl.TupleData) (string, bool) {
	for i, c := range t.Columns {
		if i < len(d.cols) && d.cols[i].id && c.DataType == pglogrepl.TupleDataTypeText {
			return unpad(d.cols[i].col, string(c.Data)).(string), true
		}
	}
	return "", false
}

// record decodes a new row. A value the new row leaves out (an
// unchanged TOASTed value, 'u') is taken from the old row when it holds
// it (REPLICA IDENTITY FULL); otherwise the field is listed in Unread,
// for complete to read from the table.
func (d *decoder) record(t, old *pglogrepl.TupleData) (connector.Record, error) {
	rec := connector.Record{Fields: make(map[string]any, len(d.s.tbl.fetch))}
	for i, c := range t.Columns {
		if i >= len(d.cols) {
			break
		}
		sc := d.cols[i]
		if c.DataType == pglogrepl.TupleDataTypeToast {
			if old != nil && i < len(old.Columns) && old.Columns[i].DataType == pglogrepl.TupleDataTypeText {
				c = old.Columns[i] // unchanged: the old row's value is the new row's
			} else {
				if sc.fetched {
					rec.Unread = append(rec.Unread, sc.name)
				}
				continue
			}
		}
		var v any
		if c.DataType == pglogrepl.TupleDataTypeText {
			var err error
			if v, err = d.value(sc.col, c.Data); err != nil {
				return rec, fmt.Errorf("read %s: column %s: %w", d.s.tbl.name, sc.name, err)
			}
		}
		switch {
		case sc.id:
			s, _ := v.(string)
			if sc.col.kind != kindText {
				s = string(c.Data)
			}
			rec.ID = unpad(sc.col, s).(string)
		case sc.dead:
			if b, ok := v.(bool); ok {
				rec.Deleted = b
			} else {
				rec.Deleted = v != nil
			}
		}
		if sc.updated {
			if tm, ok := v.(time.Time); ok {
				rec.UpdatedAt = tm
			}
		}
		if sc.fetched {
			rec.Fields[sc.name] = v
		}
	}
	if rec.ID == "" {
		return rec, fmt.Errorf("read %s: a row without %s", d.s.tbl.name, d.s.tbl.id.name)
	}
	return rec, nil
}

// value decodes the text form of a value of column c as the poll reads
// do.
func (d *decoder) value(c column, data []byte) (any, error) {
	var oid uint32
	k := c.kind
	switch k {
	case kindText:
		return unpad(c, string(data)), nil
	case kindBool:
		oid = pgtype.BoolOID
	case kindInt:
		oid = pgtype.Int8OID
	case kindFloat, kindFloat4:
		// A real: its text, parsed as a float8, as the reads select it.
		oid = pgtype.Float8OID
	case kindTimestamptz:
		oid = pgtype.TimestamptzOID
	case kindTimestamp:
		oid = pgtype.TimestampOID
	case kindDate:
		oid = pgtype.DateOID
	case kindArray:
		oid = pgtype.TextArrayOID
	}
	dst := newScanValue(k)
	if err := d.types.Scan(oid, pgtype.TextFormatCode, data, dst); err != nil {
		return nil, err
	}
	v := unpad(c, goValue(dst))
	if c.boolArray {
		spellBools(v)
	}
	return v, nil
}

// complete fills in the values the stream left out (unchanged TOASTed
// values, listed in Unread) from the table as it is now: the row's value
// then, or a later one, which the stream brings again after this record
// anyway (proto_version 1 sends a transaction only once committed, so
// the table already holds it). A row gone meanwhile (deleted, or its key
// changed, by a later transaction) keeps its Unread fields: the
// reconciler leaves what the contact holds of them as it is, rather than
// clear a value syncd never read.
func (d *decoder) complete(ctx context.Context, recs []connector.Record) ([]connector.Record, error) {
	var ids []string
	for _, r := range recs {
		if !r.Deleted && len(r.Unread) > 0 {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		return recs, nil
	}
	now, err := d.s.Get(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]connector.Record, len(now))
	for _, r := range now {
		byID[r.ID] = r
	}
	for i, r := range recs {
		if len(r.Unread) == 0 || r.Deleted {
			continue
		}
		cur, ok := byID[r.ID]
		if !ok {
			d.s.log.WithFields(logrus.Fields{logfield.Record: r.ID, logfield.Field: r.Unread}).
				Info("row gone before its unchanged TOASTed values were read; the contact keeps its values of them (REPLICA IDENTITY FULL on the table would carry them)")
			continue
		}
		for _, f := range r.Unread {
			r.Fields[f] = cur.Fields[f]
		}
		r.Unread = nil
		recs[i] = r
	}
	return recs, nil
}

// builtinKind is the kind of a built-in type by its OID; ok is false for
// other types (domains, enums, arrays, extensions), whose kind comes from
// the catalog.
func builtinKind(oid uint32) (kind, bool) {
	switch oid {
	case pgtype.BoolOID:
		return kindBool, true
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		return kindInt, true
	case pgtype.Float4OID:
		return kindFloat4, true
	case pgtype.Float8OID:
		return kindFloat, true
	case pgtype.TimestamptzOID:
		return kindTimestamptz, true
	case pgtype.TimestampOID:
		return kindTimestamp, true
	case pgtype.DateOID:
		return kindDate, true
	case pgtype.BoolArrayOID, pgtype.TextArrayOID, pgtype.VarcharArrayOID, pgtype.BPCharArrayOID, pgtype.Int4ArrayOID, pgtype.Int8ArrayOID:
		return kindArray, true
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NumericOID, pgtype.UUIDOID, pgtype.JSONOID, pgtype.JSONBOID:
		return kindText, true
	}
	return 0, false
}
