package csv

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// cellSeparators split a cell holding several values: Google Contacts'
// " ::: ", and the ";", "," or line break spreadsheets are typed with.
var cellSeparators = []string{":::", ";", ",", "\n"}

// FirstValue is the first non-empty value of a cell that may hold
// several, trimmed.
func FirstValue(cell string) string {
	rest := cell
	for rest != "" {
		cut, sepLen := len(rest), 0
		for _, sep := range cellSeparators {
			if i := strings.Index(rest, sep); i >= 0 && i < cut {
				cut, sepLen = i, len(sep)
			}
		}
		if v := strings.TrimSpace(rest[:cut]); v != "" {
			return v
		}
		if cut == len(rest) {
			break
		}
		rest = rest[cut+sepLen:]
	}
	return ""
}

// KeyOf is the ID idFrom derives from a value: an e-mail address
// lower-cased, anything else with digits (a phone number) reduced to
// them and a leading +, and the rest trimmed.
func KeyOf(v string) string {
	v = strings.TrimSpace(v)
	if strings.Contains(v, "@") {
		return strings.ToLower(v)
	}
	var b strings.Builder
	for i, r := range v {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		case unicode.IsLetter(r):
			// Not a phone number: the value as it is.
			return v
		}
	}
	if strings.Trim(b.String(), "+") == "" {
		return v
	}
	return b.String()
}

// derivedID is the ID of a row of a file read with idFrom: the key of
// the first value of the first column that has one, and that column.
func (s *Source) derivedID(h header, row []string) (string, string) {
	for i, idx := range h.keyIndex {
		if idx < len(row) {
			if v := FirstValue(row[idx]); v != "" {
				return KeyOf(v), s.idFrom[i]
			}
		}
	}
	return "", ""
}

// rowID is a row's ID, from the id column or idFrom's.
func (s *Source) rowID(h header, row []string) string {
	if len(s.idFrom) > 0 {
		id, _ := s.derivedID(h, row)
		return id
	}
	if h.idIndex < len(row) {
		return row[h.idIndex]
	}
	return ""
}

// repeatedKey is a row whose derived ID an earlier row has: the row is
// set aside on its own (a dead letter under its line), not the read.
type repeatedKey struct {
	id     string
	column string
	first  int
}

func (e *repeatedKey) Error() string {
	return fmt.Sprintf("its id %q (from column %q) is the id of line %d already: each row's first e-mail or phone must be its own; this row is left out until one of the two changes", e.id, e.column, e.first)
}

func isRepeatedKey(err error) bool {
	var rk *repeatedKey
	return errors.As(err, &rk)
}

// noKey says which columns a row without a derived ID has empty.
func (s *Source) noKey() error {
	return fmt.Errorf("no id: the columns the id is derived from (idFrom: %s) are all empty on this row", strings.Join(s.idFrom, ", "))
}
