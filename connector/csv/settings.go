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
	// Encoding must be utf-8 (a leading byte order mark is skipped).
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
	if strings.TrimSpace(s.IDColumn) == "" {
		errs = append(errs, errors.New("idColumn: required"))
	}
	switch strings.ToLower(s.Encoding) {
	case "utf-8", "utf8":
	default:
		errs = append(errs, fmt.Errorf("encoding: %q not supported, only utf-8", s.Encoding))
	}
	if s.Settle != 0 && (s.Settle < 100*time.Millisecond || s.Settle > time.Hour) {
		errs = append(errs, fmt.Errorf("settle: %v not between 100ms and 1h", s.Settle))
	}
	if s.BatchSize < 1 || s.BatchSize > MaxBatchSize {
		errs = append(errs, fmt.Errorf("batchSize: %d not between 1 and %d", s.BatchSize, MaxBatchSize))
	}
	return errs
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
