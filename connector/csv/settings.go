package csv

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Settings are the `settings:` of a csv connector.
type Settings struct {
	// Path is the CSV file. Required.
	Path string `yaml:"path"`
	// Delimiter is the one character between fields: ",", ";", a tab
	// ("\t" in a double-quoted YAML string, or the words `tab` or `\t`).
	Delimiter string `yaml:"delimiter"`
	// IDColumn is the header name of the column holding each row's ID.
	IDColumn string `yaml:"idColumn"`
	// IDFrom, for a file without an id column (an address book export),
	// derives each row's ID from these columns instead: the first value
	// of the first of them that is not empty (a cell holding several,
	// split at " ::: ", ";", "," or a line break, gives its first), an
	// e-mail address lower-cased, anything else (a phone number) reduced
	// to its digits and a leading +. The ID thus stays when rows are
	// reordered, added or removed, and changes when that value does. Two
	// rows with one such ID are each reported on their line; the first
	// syncs. Set it instead of idColumn.
	IDFrom []string `yaml:"idFrom"`
	// Encoding is the file's: utf-8 (the default; a leading byte order
	// mark is skipped), utf-16 (byte order from its mark), utf-16le,
	// utf-16be, windows-1252, iso-8859-1, iso-8859-15 or macintosh.
	Encoding string `yaml:"encoding"`
	// BatchSize is the number of rows per batch.
	BatchSize int `yaml:"batchSize"`
	// Watch starts a pass as soon as the file is replaced or rewritten
	// (and has stayed unchanged for Settle), besides the schedule.
	Watch bool `yaml:"watch"`
	// Settle is how long the file must stay unchanged after a change
	// before it is read, so that an export job's half-written file is
	// not. Default 2s (0 means the default).
	Settle time.Duration `yaml:"settle"`
}

// NewSettings returns settings holding the defaults.
func NewSettings() *Settings {
	return &Settings{
		Delimiter: DefaultDelimiter,
		IDColumn:  DefaultIDColumn,
		Encoding:  DefaultEncoding,
		BatchSize: DefaultBatchSize,
		Watch:     true,
		Settle:    DefaultSettle,
	}
}

// Validate checks the settings without opening the file: the file may
// appear only later, before the first run.
func (s *Settings) Validate() []error {
	var errs []error
	if s.Path == "" {
		errs = append(errs, errors.New("path: required"))
	}
	if _, err := s.delimiter(); err != nil {
		errs = append(errs, fmt.Errorf("delimiter: %w", err))
	}
	switch {
	case len(s.IDFrom) == 0 && strings.TrimSpace(s.IDColumn) == "":
		errs = append(errs, errors.New("idColumn: required"))
	case len(s.IDFrom) > 0 && s.IDColumn != DefaultIDColumn && s.IDColumn != "":
		errs = append(errs, fmt.Errorf("idFrom: set with idColumn %q; keep one: idColumn names a column holding ids, idFrom the columns an id is derived from", s.IDColumn))
	}
	errs = append(errs, checkNames("idColumn", s.IDColumn)...)
	seen := map[string]bool{}
	for i, c := range s.IDFrom {
		switch {
		case strings.TrimSpace(c) == "":
			errs = append(errs, fmt.Errorf("idFrom[%d]: empty column name", i))
		case seen[c]:
			errs = append(errs, fmt.Errorf("idFrom[%d]: %q named twice", i, c))
		}
		seen[c] = true
		errs = append(errs, checkNames(fmt.Sprintf("idFrom[%d]", i), c)...)
	}
	if _, err := lookupEncoding(s.Encoding); err != nil {
		errs = append(errs, fmt.Errorf("encoding: %w", err))
	}
	if s.Settle != 0 && (s.Settle < 100*time.Millisecond || s.Settle > time.Hour) {
		errs = append(errs, fmt.Errorf("settle: %v not between 100ms and 1h", s.Settle))
	}
	if s.BatchSize < 1 || s.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("batchSize: %d not between 1 and %d", s.BatchSize, MaxBatchSize))
	}
	return errs
}

// checkNames refuses a column name as a header never reads: with a byte
// order mark, or in the quotes of the file's text.
func checkNames(key, name string) []error {
	switch {
	case strings.HasPrefix(name, "\uFEFF"):
		return []error{fmt.Errorf("%s: %q starts with a byte order mark, which is not part of the column's name: write %q", key, name, strings.TrimPrefix(name, "\uFEFF"))}
	case len(name) >= 2 && strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`):
		return []error{fmt.Errorf("%s: %q is quoted as in the file's text; the column's name is %q", key, name, strings.Trim(name, `"`))}
	}
	return nil
}

// delimiter returns the delimiter as a rune.
func (s *Settings) delimiter() (rune, error) {
	d := s.Delimiter
	switch d {
	case "tab", `\t`:
		d = "\t"
	}
	r, size := utf8.DecodeRuneInString(d)
	switch {
	case d == "":
		return 0, errors.New("required")
	case size != len(d):
		return 0, fmt.Errorf("%q is not one character", s.Delimiter)
	case r == utf8.RuneError || r == '"' || r == '\r' || r == '\n':
		return 0, fmt.Errorf("%q cannot separate fields", s.Delimiter)
	}
	return r, nil
}

// Defaults of the settings.
const (
	DefaultDelimiter = ","
	DefaultIDColumn  = "id"
	DefaultEncoding  = "utf-8"
	DefaultBatchSize = 500
	// MaxBatchSize bounds batchSize.
	MaxBatchSize = 10000
	// DefaultSettle is how long a changed file must stay unchanged before
	// a watched connector reads it.
	DefaultSettle = 2 * time.Second
)
