package workspace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Errors of a custom field value that does not fit its field's type.
var (
	ErrNotBoolean   = errors.New("not a boolean: write true or false (yes/no and 1/0 are read too)")
	ErrNotNumber    = errors.New("not a number")
	ErrNotDate      = errors.New("not a date: write 2006-01-02 or an RFC 3339 date-time such as 2006-01-02T15:04:05Z")
	ErrSeveralValue = errors.New("several values for a field that holds one")
)

// DateTimeLayout is the form of a date field's value syncd sends: an RFC
// 3339 date-time in UTC with milliseconds, as the service writes them. A
// date-only value is midnight UTC of that day.
const DateTimeLayout = "2006-01-02T15:04:05.000Z"

// CanonicalText puts the text of a value of a custom field of type typ in
// its canonical form, so that equal data compares equal whichever form
// carried it (true and ["true"], 43 and "43.0", 2023-01-02 and
// 2023-01-02T00:00:00.000Z):
//   - boolean: "true" or "false";
//   - number: the shortest decimal ("43", "0.5");
//   - date: "2006-01-02" at midnight UTC, else RFC 3339 in UTC, to the
//     millisecond;
//   - string, url, address: the one value, trimmed;
//   - multi-select and unknown types: the values as given.
//
// Blank strings are dropped; no value at all is nil, without error. A
// value that does not parse for its type is an error naming the value.
func CanonicalText(typ string, text []string) ([]string, error) {
	vals := make([]string, 0, len(text))
	for _, s := range text {
		if strings.TrimSpace(s) != "" {
			vals = append(vals, s)
		}
	}
	if len(vals) == 0 {
		return nil, nil
	}
	switch typ {
	case FieldBoolean, FieldNumber, FieldDate, FieldString, FieldURL, FieldAddress:
	default:
		return vals, nil
	}
	if len(vals) > 1 {
		return nil, fmt.Errorf("%w (%d for a %s field)", ErrSeveralValue, len(vals), typ)
	}
	s := strings.TrimSpace(vals[0])
	switch typ {
	case FieldBoolean:
		b, err := parseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		return []string{strconv.FormatBool(b)}, nil
	case FieldNumber:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q: %w", s, ErrNotNumber)
		}
		return []string{strconv.FormatFloat(f, 'f', -1, 64)}, nil
	case FieldDate:
		t, err := parseDate(s)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		if t.Equal(t.Truncate(24 * time.Hour)) {
			return []string{t.Format(time.DateOnly)}, nil
		}
		return []string{t.Format(time.RFC3339Nano)}, nil
	}
	return []string{s}, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "1":
		return true, nil
	case "false", "f", "no", "n", "0":
		return false, nil
	}
	return false, ErrNotBoolean
}

// dateLayouts are the forms a date value is read in; one without a zone
// is UTC.
var dateLayouts = []string{time.DateOnly, time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"}

func parseDate(s string) (time.Time, error) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC().Truncate(time.Millisecond), nil
		}
	}
	return time.Time{}, ErrNotDate
}

// EncodeValue is the value of a custom field of type typ that carries
// text (read through CanonicalText) in form (ValuesTyped or ValuesArrays):
//
//	type          typed                        arrays
//	boolean       true                         ["true"]
//	number        43.5                         ["43.5"]
//	date          "2023-01-02T00:00:00.000Z"   ["2023-01-02T00:00:00.000Z"]
//	string, url,  "text"                       ["text"]
//	address
//	multi-select  ["a","b"]                    ["a","b"]
//	(no value)    null                         []
//
// A field of unknown type (no definition loaded) is sent as an array.
func EncodeValue(typ, form string, text []string) (FieldValue, error) {
	vals, err := CanonicalText(typ, text)
	if err != nil {
		return FieldValue{}, err
	}
	if len(vals) == 0 {
		if form == ValuesArrays {
			return ListValue(nil), nil
		}
		return NullValue(), nil
	}
	if typ == FieldDate {
		t, _ := parseDate(vals[0]) // canonical: parses
		vals = []string{t.Format(DateTimeLayout)}
	}
	if form == ValuesArrays {
		return ListValue(vals), nil
	}
	switch typ {
	case FieldBoolean:
		return BoolValue(vals[0] == "true"), nil
	case FieldNumber:
		return FieldValue{kind: kindNumber, str: vals[0]}, nil
	case FieldDate, FieldString, FieldURL, FieldAddress:
		return StringValue(vals[0]), nil
	}
	return ListValue(vals), nil
}

// FitsType reports whether v has the JSON kind a field of type typ takes
// in the typed form (null always fits); the date-time format of a date is
// checked too.
func FitsType(typ string, v FieldValue) bool {
	switch v.kind {
	case kindNull:
		return true
	case kindList:
		return typ == FieldMultiSelect
	case kindBool:
		return typ == FieldBoolean
	case kindNumber:
		return typ == FieldNumber
	}
	switch typ {
	case FieldString, FieldURL, FieldAddress:
		return true
	case FieldDate:
		_, err := time.Parse(time.RFC3339Nano, v.str)
		return err == nil
	}
	return false
}
