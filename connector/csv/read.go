package csv

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sirupsen/logrus"
	"golang.org/x/text/transform"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/idset"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Fields returns the header's names.
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	if s.closed.Load() {
		return nil, errClosed
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := s.checkUTF16(f); err != nil {
		return nil, err
	}
	h, err := s.header(s.newReader(f))
	if err != nil {
		return nil, err
	}
	return h.names, nil
}

// header is a file's validated header line.
type header struct {
	names []string
	// idIndex is the index of the ID column (-1 with idFrom).
	idIndex int
	// keyIndex are the indexes of idFrom's columns.
	keyIndex []int
	// width is the header's field count, with trailing empty columns.
	width int
}

// newReader reads the CSV text of f: decoded from the file's encoding,
// without a byte order mark.
func (s *Source) newReader(f io.Reader) *csv.Reader {
	if s.enc != nil {
		f = transform.NewReader(f, s.enc.NewDecoder())
	}
	br := bufio.NewReaderSize(f, 64<<10)
	// A byte order mark is not part of the first column's name.
	if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
		_, _ = br.Discard(3)
	}
	r := csv.NewReader(br)
	r.Comma = s.delim
	r.ReuseRecord = true
	r.FieldsPerRecord = 0 // the header's field count, for every row
	return r
}

// header reads and checks the header line.
func (s *Source) header(r *csv.Reader) (header, error) {
	rec, err := r.Read()
	if errors.Is(err, io.EOF) {
		// An empty file is more likely a failed export than a list
		// with no customers: refuse it rather than delete every row.
		return header{}, fmt.Errorf("read %s: empty file, no header line", s.path)
	}
	if err != nil {
		return header{}, s.parseError(err)
	}
	// A spreadsheet saves the empty columns after the last one named: a
	// row still has their fields, the records do not.
	named := len(rec)
	for named > 0 && strings.TrimSpace(rec[named-1]) == "" {
		named--
	}
	if named == 0 {
		return header{}, fmt.Errorf("read %s line 1: the header names no column", s.path)
	}
	h := header{names: make([]string, named), idIndex: -1, width: len(rec)}
	seen := make(map[string]int, len(rec))
	for i, name := range rec[:named] {
		if !utf8.ValidString(name) {
			return header{}, connector.SchemaError(fmt.Errorf("read %s line 1: header column %d is not valid UTF-8%s", s.path, i+1, s.encodingHint()))
		}
		if strings.TrimSpace(name) == "" {
			return header{}, fmt.Errorf("read %s line 1: header column %d has no name", s.path, i+1)
		}
		if j, dup := seen[name]; dup {
			return header{}, fmt.Errorf("read %s line 1: header names %q in columns %d and %d", s.path, name, j+1, i+1)
		}
		seen[name] = i
		h.names[i] = name
		if name == s.idColumn {
			h.idIndex = i
		}
	}
	if len(s.idFrom) > 0 {
		for _, c := range s.idFrom {
			i, ok := seen[c]
			if !ok {
				return header{}, connector.SchemaError(fmt.Errorf("read %s line 1: no column %q (idFrom) in header%s", s.path, c, nearName(h.names, c, "idFrom")))
			}
			h.keyIndex = append(h.keyIndex, i)
		}
		return h, nil
	}
	if h.idIndex < 0 {
		return header{}, connector.SchemaError(fmt.Errorf("read %s line 1: no id column %q in header%s", s.path, s.idColumn, nearName(h.names, s.idColumn, "idColumn")))
	}
	return h, nil
}

// parseError turns an encoding/csv error into one naming file and line.
func (s *Source) parseError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if pe.StartLine != pe.Line {
			return fmt.Errorf("read %s lines %d-%d: %w", s.path, pe.StartLine, pe.Line, pe.Err)
		}
		return fmt.Errorf("read %s line %d: %w", s.path, pe.Line, pe.Err)
	}
	return fmt.Errorf("read %s: %w", s.path, err)
}

// column is one field of the records, with its index in a row.
type column struct {
	name  string
	index int
}

// columns returns the columns that records carry.
func (s *Source) columns(h header) ([]column, error) {
	if len(s.fields) == 0 {
		cols := make([]column, len(h.names))
		for i, n := range h.names {
			cols[i] = column{n, i}
		}
		return cols, nil
	}
	cols := make([]column, 0, len(s.fields))
	for _, f := range s.fields {
		i := indexOf(h.names, f)
		if i < 0 {
			return nil, fmt.Errorf("read %s line 1: no column %q in header", s.path, f)
		}
		cols = append(cols, column{f, i})
	}
	return cols, nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// read streams the file in batches. Memory holds one batch of rows and,
// to refuse repeated IDs, a few bytes per row (idset.Set). A malformed
// line becomes a record marked Invalid (a dead letter for the
// reconciler) and the read goes on; a file that changes while it is read
// stops the read with ErrFileChanged before the next batch.
func (s *Source) read(ctx context.Context, withCheckpoint bool, fn connector.BatchFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return errClosed
	}
	start := time.Now()
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := newWatch(s.path, f)
	if err != nil {
		return err
	}
	checkpoint := ""
	if withCheckpoint {
		checkpoint = fmt.Sprintf("csv:size=%d:mtime=%d", w.start.size, w.start.mtime)
	}
	rr := &rowReader{s: s, f: f, w: w}
	rr.r = s.newReader(w.reader(s.pos.track(f)))
	if rr.bom, err = s.hasBOM(f); err != nil {
		return err
	}
	if err := s.checkUTF16(f); err != nil {
		return err
	}
	h, err := s.header(rr.r)
	if err != nil {
		return err
	}
	cols, err := s.columns(h)
	if err != nil {
		return err
	}
	rr.h = h

	seen := idset.New(s.spillAt) // hashes of the IDs read so far
	defer seen.Close()
	batch := make([]connector.Record, 0, s.batchSize)
	rows, invalid, lastLine := 0, 0, 0
	deliver := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.check(); err != nil {
			return err
		}
		if err := fn(ctx, connector.Batch{Records: batch, Checkpoint: checkpoint}); err != nil {
			return fmt.Errorf("csv batch of %s: %w", s.path, err)
		}
		batch = make([]connector.Record, 0, s.batchSize)
		return nil
	}
	for {
		row, line, bad, err := rr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if bad == nil && blankRow(row) {
			// A spreadsheet's once-used, now empty row (";;;;"): no
			// record, as an empty line is none.
			continue
		}
		var rec connector.Record
		if bad == nil {
			rec, bad, err = s.record(h, cols, row, line, seen)
			if err != nil {
				return err
			}
		}
		if bad != nil {
			rec = s.invalidRecord(h, row, line, bad)
			invalid++
		}
		// A full batch waits for the next row: the last row of the file
		// stays in hand until the end (see cutShort).
		if len(batch) == s.batchSize {
			if err := deliver(); err != nil {
				return err
			}
		}
		batch = append(batch, rec)
		rows++
		lastLine = line
	}
	if err := w.finish(); err != nil {
		return err
	}
	if n := len(batch); n > 0 && batch[n-1].Invalid != nil {
		cut, err := s.cutShort(f, w.start.size)
		if err != nil {
			return err
		}
		if cut {
			// The file ends inside its malformed last line: it was cut
			// short, and the rows after the cut are missing, not deleted.
			// The line's id is not taken, so that the pass infers no
			// deletion (see connector.Record.Invalid).
			last := &batch[n-1]
			last.Fields, last.ID = nil, fmt.Sprintf("line %d", lastLine)
			last.Invalid = fmt.Errorf("%w; the file ends inside this line, without a line break: it looks cut short, so no record missing from it is taken for deleted this pass", last.Invalid)
		}
	}
	if len(batch) > 0 {
		if err := deliver(); err != nil {
			return err
		}
	}
	s.log.WithFields(logrus.Fields{logfield.Rows: rows, logfield.Invalid: invalid, logfield.Duration: time.Since(start)}).Debug("csv file read")
	return nil
}

// record checks one well-formed row and makes its record; bad says why
// the row is refused on its own (the read goes on), err why the whole
// read must stop (a repeated id: which of the two rows is right cannot
// be told).
func (s *Source) record(h header, cols []column, row []string, line int, seen *idset.Set) (rec connector.Record, bad, err error) {
	for i, v := range row {
		if !utf8.ValidString(v) {
			return rec, fmt.Errorf("column %q is not valid UTF-8%s", columnName(h, i), s.encodingHint()), nil
		}
	}
	if len(s.idFrom) > 0 {
		return s.keyedRecord(h, cols, row, line, seen)
	}
	raw := row[h.idIndex]
	id := connector.NormalizeID(raw)
	if id == "" {
		return rec, fmt.Errorf("empty id in column %q", s.idColumn), nil
	}
	first, err := s.seenAt(h, id, line, seen)
	if err != nil {
		return rec, nil, err
	}
	if first > 0 {
		return rec, nil, fmt.Errorf("read %s line %d: id %q repeats the row of line %d%s", s.path, line, id, first, trimmedNote(raw))
	}
	fields := make(map[string]any, len(cols))
	for _, c := range cols {
		fields[c.name] = row[c.index]
	}
	if _, ok := fields[s.idColumn]; ok {
		fields[s.idColumn] = id
	}
	return connector.Record{ID: id, Fields: fields}, nil, nil
}

// seenAt adds id to the ids read and returns the line of an earlier row
// with it, 0 for none (two distinct ids with one hash are nothing wrong).
func (s *Source) seenAt(h header, id string, line int, seen *idset.Set) (int, error) {
	maybe, err := seen.Add(hashID(id))
	if err != nil || !maybe {
		return 0, err
	}
	return s.lineOf(h, id, line)
}

// keyedRecord is record for a file read with idFrom: the ID derived from
// the row, and a repeated one refused on its line (bad), not the read.
func (s *Source) keyedRecord(h header, cols []column, row []string, line int, seen *idset.Set) (rec connector.Record, bad, err error) {
	id, col := s.derivedID(h, row)
	id = connector.NormalizeID(id)
	if id == "" {
		return rec, s.noKey(), nil
	}
	first, err := s.seenAt(h, id, line, seen)
	if err != nil {
		return rec, nil, err
	}
	if first > 0 {
		return rec, &repeatedKey{id: id, column: col, first: first}, nil
	}
	fields := make(map[string]any, len(cols))
	for _, c := range cols {
		fields[c.name] = row[c.index]
	}
	return connector.Record{ID: id, Fields: fields}, nil, nil
}

// blankRow reports whether every field of row is white space.
func blankRow(row []string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

// columnName is the name of a row's column i, also past the named ones.
func columnName(h header, i int) string {
	if i < len(h.names) {
		return h.names[i]
	}
	return fmt.Sprintf("column %d", i+1)
}

// encodingHint is what a file that is not UTF-8 should set.
func (s *Source) encodingHint() string {
	if s.enc != nil {
		return ""
	}
	return " (a file saved by Excel on Windows is often windows-1252: set encoding)"
}

// nearName names a header column that differs from want only in case,
// spaces, quotes or a byte order mark, as a hint.
func nearName(names []string, want, key string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.TrimSpace(strings.Trim(strings.TrimPrefix(s, "\uFEFF"), `"' `)))
	}
	for _, n := range names {
		if norm(n) == norm(want) {
			return fmt.Sprintf(" (the header has %q: write %s: %q)", n, key, n)
		}
	}
	return ""
}

// trimmedNote explains a repeat that only whitespace hid.
func trimmedNote(raw string) string {
	if raw == connector.NormalizeID(raw) {
		return ""
	}
	return fmt.Sprintf(" (%q, once the whitespace around it is trimmed)", raw)
}

// invalidRecord is the record of a malformed line: its id when it can
// be read, so that its contact is not taken for deleted, else a
// placeholder naming the line.
func (s *Source) invalidRecord(h header, row []string, line int, bad error) connector.Record {
	rec := connector.Record{ID: fmt.Sprintf("line %d", line),
		Invalid: fmt.Errorf("%s line %d: %w", s.path, line, bad)}
	if len(s.idFrom) > 0 {
		// A repeated id stays the line's: its id is the other row's.
		if id := connector.NormalizeID(s.rowID(h, row)); id != "" && utf8.ValidString(id) && !isRepeatedKey(bad) {
			rec.ID = id
		}
		return rec
	}
	if h.idIndex >= 0 && h.idIndex < len(row) {
		if id := connector.NormalizeID(row[h.idIndex]); id != "" && utf8.ValidString(id) {
			rec.ID = id
			rec.Fields = map[string]any{s.idColumn: id}
		}
	}
	return rec
}

// cutShort reports whether the file (of size bytes) ends without a line
// break: its last line was cut.
func (s *Source) cutShort(f *os.File, size int64) (bool, error) {
	if size == 0 {
		return false, nil
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, size-1); err != nil {
		return false, fmt.Errorf("read %s: %w", s.path, err)
	}
	return b[0] != '\n', nil
}

// hasBOM reports whether the file starts with a byte order mark (which
// newReader skips), for the offsets a recovery seeks to.
func (s *Source) hasBOM(f *os.File) (bool, error) {
	var r io.Reader = io.NewSectionReader(f, 0, 3*4)
	if s.enc != nil {
		r = transform.NewReader(r, s.enc.NewDecoder())
	}
	b := make([]byte, 3)
	n, err := io.ReadFull(r, b)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, err
	}
	return n == 3 && string(b) == "\uFEFF", nil
}

// lineOf rereads the file up to line before and returns the line of the
// first row whose ID is id, or 0 when there is none (the hashes of two
// distinct IDs collided).
func (s *Source) lineOf(h header, id string, before int) (int, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := s.newReader(f)
	if _, err := r.Read(); err != nil {
		return 0, s.parseError(err)
	}
	for {
		row, err := r.Read()
		if err != nil {
			return 0, s.parseError(err)
		}
		line, _ := r.FieldPos(0)
		if line >= before {
			return 0, nil
		}
		if connector.NormalizeID(s.rowID(h, row)) == id {
			return line, nil
		}
	}
}

// hashID is the key of an ID in the repeated-ID check. A key seen before
// is confirmed by lineOf, so a collision costs a reread, not an error.
func hashID(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return idset.Mix(h.Sum64())
}
