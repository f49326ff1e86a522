package csv

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/text/transform"
)

// rowReader yields a file's rows after the header, with their line
// numbers, and gets past malformed lines: a line encoding/csv refuses is
// returned as bad, and when the refused record spans several lines (a
// quote opened and never closed properly swallows the lines after it),
// the read starts again on the line after the one that opened it, so
// that one stray quote costs one line, not the rest of the file.
type rowReader struct {
	s   *Source
	f   *os.File
	w   *watch
	r   *csv.Reader
	h   header
	bom bool
	// base is the file line before the first line r reads (after a
	// recovery, r starts mid-file).
	base int
	// offset is the file offset r started reading at.
	offset int64
}

// next returns the next row and its line; bad is set for a malformed
// line (row then holds what could be read); err is io.EOF at the end.
func (rr *rowReader) next() (row []string, line int, bad, err error) {
	before := rr.r.InputOffset()
	row, err = rr.r.Read()
	if err == nil {
		l, _ := rr.r.FieldPos(0)
		return row, rr.base + l, nil, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, 0, nil, err
	}
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return nil, 0, nil, fmt.Errorf("read %s: %w", rr.s.path, err)
	}
	start, end := rr.base+pe.StartLine, rr.base+pe.Line
	if errors.Is(err, csv.ErrFieldCount) {
		return row, start, fmt.Errorf("%d fields, the header has %d", len(row), len(rr.h.names)), nil
	}
	if start == end {
		return nil, start, fmt.Errorf("%w", pe.Err), nil
	}
	// The record ran from line start to line end: only its first line is
	// known to be wrong. Read again from the line after it.
	if err := rr.restartAfterLine(before, start); err != nil {
		return nil, 0, nil, err
	}
	return nil, start, fmt.Errorf("%w (a quoted field opened on this line does not close properly; it would take in %s)", pe.Err, lineRange(start+1, end)), nil
}

// restartAfterLine makes r read from the line after the one that starts
// at consumed bytes into r's input (line is that line's number).
func (rr *rowReader) restartAfterLine(consumed int64, line int) error {
	off := rr.offset + consumed
	if rr.offset == 0 && rr.bom {
		off += 3
	}
	in, err := rr.at(off)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(in, 64<<10)
	skipped, err := br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", rr.s.path, err)
	}
	rr.offset = off + int64(len(skipped))
	rr.base = line
	rr.w.unhashed = true
	if in, err = rr.at(rr.offset); err != nil {
		return err
	}
	rr.r = csv.NewReader(bufio.NewReaderSize(in, 64<<10))
	rr.r.Comma = rr.s.delim
	rr.r.ReuseRecord = true
	rr.r.FieldsPerRecord = rr.h.width
	return nil
}

// at returns the file's text from offset off of it: bytes of the file
// for UTF-8, else of its decoded text (decoded again from the start, the
// price of a malformed line in a file that is not UTF-8).
func (rr *rowReader) at(off int64) (io.Reader, error) {
	if rr.s.enc == nil {
		return io.NewSectionReader(rr.f, off, 1<<62), nil
	}
	r := transform.NewReader(io.NewSectionReader(rr.f, 0, 1<<62), rr.s.enc.NewDecoder())
	if _, err := io.CopyN(io.Discard, r, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", rr.s.path, err)
	}
	return r, nil
}

// lineRange names lines from to to.
func lineRange(from, to int) string {
	if from == to {
		return fmt.Sprintf("line %d", from)
	}
	return fmt.Sprintf("lines %d-%d", from, to)
}
