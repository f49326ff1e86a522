package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Custom field types, as GET /v1/contact-custom-fields names them.
const (
	FieldAddress     = "address"
	FieldBoolean     = "boolean"
	FieldDate        = "date"
	FieldMultiSelect = "multi-select"
	FieldNumber      = "number"
	FieldString      = "string"
	FieldURL         = "url"
)

// FieldTypes lists the custom field types.
var FieldTypes = []string{FieldAddress, FieldBoolean, FieldDate, FieldMultiSelect, FieldNumber, FieldString, FieldURL}

// ValidFieldType reports whether t is one of FieldTypes.
func ValidFieldType(t string) bool {
	for _, ft := range FieldTypes {
		if t == ft {
			return true
		}
	}
	return false
}

// The two forms of custom field values (see custom-fields.md beside this
// file, which cites the published document).
const (
	// ValuesTyped is the form of the service's published OpenAPI
	// document: a value typed by its field's type (a boolean, a number,
	// a date-time string, a string, or an array of strings for
	// multi-select), null to clear.
	ValuesTyped = "typed"
	// ValuesArrays is the form of the spec syncd was first built from:
	// every value an array of strings, [] to clear.
	ValuesArrays = "arrays"
)

// ValidValueForm reports whether f is ValuesTyped or ValuesArrays.
func ValidValueForm(f string) bool { return f == ValuesTyped || f == ValuesArrays }

// valueKind is the JSON kind a FieldValue holds.
type valueKind uint8

const (
	kindNull valueKind = iota
	kindList
	kindString
	kindBool
	kindNumber
)

// FieldValue is the value of a contact's custom field in either form the
// service uses: an array of strings, a string, a boolean, a number, or
// null (the zero FieldValue). It encodes back to the JSON kind it holds;
// Text reads any of them as strings.
type FieldValue struct {
	kind valueKind
	list []string
	str  string // string value, or the number's JSON text
	b    bool
}

// NullValue is JSON null: the field cleared.
func NullValue() FieldValue { return FieldValue{} }

// ListValue is an array of strings (never null: a nil vals is []).
func ListValue(vals []string) FieldValue {
	return FieldValue{kind: kindList, list: append(make([]string, 0, len(vals)), vals...)}
}

// StringValue is a JSON string.
func StringValue(s string) FieldValue { return FieldValue{kind: kindString, str: s} }

// BoolValue is a JSON boolean.
func BoolValue(b bool) FieldValue { return FieldValue{kind: kindBool, b: b} }

// NumberValue is a JSON number; f must be finite.
func NumberValue(f float64) FieldValue {
	return FieldValue{kind: kindNumber, str: strconv.FormatFloat(f, 'f', -1, 64)}
}

// IsNull reports whether the value is JSON null.
func (v FieldValue) IsNull() bool { return v.kind == kindNull }

// IsEmpty reports whether the value holds nothing: null, or an empty
// array.
func (v FieldValue) IsEmpty() bool {
	return v.kind == kindNull || (v.kind == kindList && len(v.list) == 0)
}

// Kind names the JSON kind held: null, array, string, boolean or number.
func (v FieldValue) Kind() string {
	return [...]string{"null", "array", "string", "boolean", "number"}[v.kind]
}

// Text returns the value as strings: an array's elements, a scalar as one
// string (true/false, a number's JSON text), nothing for null.
func (v FieldValue) Text() []string {
	switch v.kind {
	case kindList:
		return append([]string(nil), v.list...)
	case kindString, kindNumber:
		return []string{v.str}
	case kindBool:
		return []string{strconv.FormatBool(v.b)}
	}
	return nil
}

// Bool returns the boolean held, if the value is one.
func (v FieldValue) Bool() (b, ok bool) { return v.b, v.kind == kindBool }

// Clone returns a copy that shares no slice with v.
func (v FieldValue) Clone() FieldValue {
	if v.kind == kindList {
		v.list = append(make([]string, 0, len(v.list)), v.list...)
	}
	return v
}

// MarshalJSON encodes the JSON kind held.
func (v FieldValue) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case kindList:
		return json.Marshal(append(make([]string, 0, len(v.list)), v.list...))
	case kindString:
		return json.Marshal(v.str)
	case kindBool:
		return json.Marshal(v.b)
	case kindNumber:
		return []byte(v.str), nil
	}
	return []byte("null"), nil
}

// ErrFieldValue is wrapped by the error of a custom field value that is
// neither an array of strings, a string, a boolean, a number nor null.
var ErrFieldValue = errors.New("custom field value is not an array of strings, a string, a boolean, a number or null")

// UnmarshalJSON reads any of the forms.
func (v *FieldValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	*v = FieldValue{}
	switch {
	case len(b) == 0:
		return ErrFieldValue
	case bytes.Equal(b, []byte("null")):
		return nil
	case b[0] == '[':
		var l []string
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("%w: %s", ErrFieldValue, err)
		}
		*v = ListValue(l)
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = StringValue(s)
	case bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("false")):
		*v = BoolValue(b[0] == 't')
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("%w: %s", ErrFieldValue, b)
		}
		*v = FieldValue{kind: kindNumber, str: n.String()}
	}
	return nil
}
