package discover

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	csvconn "github.com/syncd-io/syncd/connector/csv"
)

// csvSampleRows is how many rows prepareCSV reads to tell e-mail and
// phone columns by their values.
const csvSampleRows = 50

// prepareCSV finds what a CSV file needs before it can be read: its
// encoding and delimiter (when not given), the export it is (exports.go),
// and its id: a column holding one, else the e-mail and phone columns an
// id is derived from (idFrom).
func prepareCSV(_ context.Context, in *inspection) error {
	path := in.values["path"]
	head, err := readHead(path)
	if err != nil {
		return err
	}
	if !in.given("encoding") {
		if enc, why := sniffEncoding(head); enc != "" {
			in.set("encoding", enc, why)
		}
	}
	if !in.given("delimiter") {
		text, err := io.ReadAll(mustText(bytes.NewReader(head), in.values["encoding"]))
		if err != nil {
			return fmt.Errorf("path: %s: %w", path, err)
		}
		if d, why := sniffDelimiter(string(text)); d != "" {
			in.set("delimiter", d, why)
		}
	}
	header, rows, err := in.sampleCSV()
	if err != nil {
		return err
	}
	in.src.RegionHint, in.src.RegionHintWhy = languageRegion(header)
	if r, why := countryRegion(header, rows); r != "" {
		in.src.RegionHint, in.src.RegionHintWhy, in.src.RegionHintStrong = r, why, true
	}
	exp := recognise(header)
	sep := ""
	if exp != nil {
		in.src.Export, in.src.ExportSource, sep = exp.Name, exp.Source, exp.Separator
		for _, h := range header {
			if c, ok := exp.column(h); ok {
				f := in.types[h]
				f.Hint, f.LabelFrom, f.Separator = c.Hint, c.LabelFrom, sep
				in.types[h] = f
			}
		}
	}
	if in.given("idColumn") || in.given("idFrom") {
		if c := in.values["idColumn"]; c != "" && !in.given("idFrom") {
			in.src.Skip[c] = "the row id (idColumn)"
		}
		return nil
	}
	col, why := "", ""
	if exp != nil {
		for _, h := range header {
			if in.types[h].Hint == "id" {
				col, why = h, "the "+strings.SplitN(exp.Name, " (", 2)[0]+" record id"
				break
			}
		}
	}
	if col == "" {
		col, why = idField(header)
	}
	if col != "" {
		if col != "id" {
			in.set("idColumn", col, why)
		}
		in.src.Skip[col] = "the row id (idColumn)"
		return nil
	}
	keys := keyColumns(header, rows, in.types)
	if len(keys) == 0 {
		return fmt.Errorf("idColumn: the file has no column that looks like a row id and no e-mail or phone column to derive one from; add a column holding each row's unique id (or each row's e-mail address), or name the id column with --set idColumn=COLUMN")
	}
	value, _ := json.Marshal(keys)
	in.values["idFrom"] = string(value)
	what, changes := "first e-mail, else its first phone", "e-mail (or, without one, phone number)"
	switch {
	case !hasKind(keys, rows, header, in.types, "phone"):
		what, changes = "first e-mail", "e-mail"
	case !hasKind(keys, rows, header, in.types, "email"):
		what, changes = "first phone", "phone number"
	}
	in.src.Settings = append(in.src.Settings, Setting{
		Key: "idFrom", Value: keys, Why: "no id column: a row's id is its " + what,
		Note: "The file has no id column, so each row's id is its " + what + " (lower-cased; a number's digits),\n" +
			"which stays when rows are reordered, added or removed. A person whose " + changes + "\n" +
			"changes becomes a new contact, the old one handled as onSourceDelete says; two rows\n" +
			"sharing one are each reported on their line. To adopt the contacts the workspace\n" +
			"already has rather than create them again, add match: [email, phone] to the connector.",
	})
	return nil
}

// mustText is csvconn.Text for an encoding already checked.
func mustText(r io.Reader, enc string) io.Reader {
	t, err := csvconn.Text(r, enc)
	if err != nil {
		return r
	}
	return t
}

// readHead reads the start of the file, for its encoding and delimiter.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("path: %s: %w", path, err)
	}
	return b[:n], nil
}

// sniffEncoding tells a file's encoding from its first bytes: UTF-16 by
// its byte order mark (or the zero bytes of ASCII text in it), else
// Windows-1252 when the bytes are not UTF-8; "" for UTF-8.
func sniffEncoding(b []byte) (string, string) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}) || bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return "utf-16", "the file starts with a UTF-16 byte order mark (Excel's \"Unicode Text\")"
	case len(b) >= 4 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0:
		return "utf-16le", "every other byte is zero: UTF-16 without a byte order mark"
	case len(b) >= 4 && b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0:
		return "utf-16be", "every other byte is zero: UTF-16 without a byte order mark"
	}
	// A multi-byte character cut at the end of the sample is not wrong.
	check := b
	for i := 0; i < 3 && len(check) > 0 && !utf8.Valid(check); i++ {
		check = check[:len(check)-1]
	}
	if !utf8.Valid(check) {
		return "windows-1252", "the file is not UTF-8; Excel's CSV on Windows writes Windows-1252 (check the accented letters after the first run, or --set encoding=...)"
	}
	return "", ""
}

// sniffDelimiter picks the delimiter the first line is split by: the one
// of ",", ";", tab and "|" it has most of outside quotes; "" for ",".
func sniffDelimiter(text string) (string, string) {
	text = strings.TrimPrefix(text, "\uFEFF")
	counts := map[rune]int{}
	quoted := false
	for _, r := range text {
		if r == '"' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if r == '\n' || r == '\r' {
			break
		}
		counts[r]++
	}
	best, n := ',', counts[',']
	for _, r := range []rune{';', '\t', '|'} {
		if counts[r] > n {
			best, n = r, counts[r]
		}
	}
	switch {
	case best == ',':
		return "", ""
	case best == '\t':
		return "tab", "the header is split by tabs"
	}
	return string(best), fmt.Sprintf("the header is split by %q", string(best))
}

// sampleCSV reads the header and the first rows as the connector would:
// decoded, without a byte order mark, and without the empty names a
// spreadsheet leaves at the header's end.
func (in *inspection) sampleCSV() ([]string, [][]string, error) {
	path := in.values["path"]
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("path: %w", err)
	}
	defer f.Close()
	text, err := csvconn.Text(f, in.values["encoding"])
	if err != nil {
		return nil, nil, fmt.Errorf("encoding: %w", err)
	}
	br := bufio.NewReader(text)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
		// Not part of the first name, quoted or not ("\uFEFF\"Record ID\"").
		_, _ = br.Discard(3)
	}
	r := csv.NewReader(br)
	switch d := in.values["delimiter"]; d {
	case "", ",":
	case "tab", `\t`, "\t":
		r.Comma = '\t'
	default:
		r.Comma = []rune(d)[0]
	}
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("path: header of %s: %w", path, err)
	}
	for len(head) > 0 && strings.TrimSpace(head[len(head)-1]) == "" {
		head = head[:len(head)-1]
	}
	var rows [][]string
	for len(rows) < csvSampleRows {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			continue
		}
		rows = append(rows, row)
	}
	return head, rows, nil
}

// keyColumns are the columns an id can be derived from: the e-mail
// columns, then the phone columns, in the header's order; by their
// export hint, else their name, else their values.
func keyColumns(header []string, rows [][]string, types map[string]Field) []string {
	var emails, phones []string
	for i, h := range header {
		switch columnKind(h, i, rows, types) {
		case "email":
			emails = append(emails, h)
		case "phone":
			phones = append(phones, h)
		}
	}
	return append(emails, phones...)
}

// columnKind is "email", "phone" or "" for a column.
func columnKind(name string, i int, rows [][]string, types map[string]Field) string {
	hint := types[name].Hint
	switch {
	case hint == "phone:company":
		return "" // a switchboard number colleagues share: no one's id
	case strings.HasPrefix(hint, "email"):
		return "email"
	case strings.HasPrefix(hint, "phone"):
		return "phone"
	case hint != "":
		return ""
	}
	ws := words(name)
	if contains(ws, "fax") {
		return ""
	}
	var samples []string
	for _, r := range rows {
		if i < len(r) {
			if v := csvconn.FirstValue(r[i]); v != "" {
				samples = append(samples, v)
			}
		}
	}
	switch {
	case only(ws, emailWords, emailAlso) || share(samples, looksEmail) >= 0.6:
		return "email"
	case only(ws, phoneWords, labelWords) || share(samples, looksPhone) >= 0.6:
		return "phone"
	}
	return ""
}

// hasKind reports whether one of the key columns is of kind.
func hasKind(keys []string, rows [][]string, header []string, types map[string]Field, kind string) bool {
	for _, k := range keys {
		for i, h := range header {
			if h == k && columnKind(h, i, rows, types) == kind {
				return true
			}
		}
	}
	return false
}
