package workspace

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestCustomFieldDecode decodes a contact's custom field of each of the 7
// types in the typed form (the published document's), in the arrays form
// (the spec's) and as null: every one decodes, keeps its type, reads as
// the same canonical text in both forms, and encodes back as it came.
func TestCustomFieldDecode(t *testing.T) {
	tests := []struct {
		name      string
		typ       string
		typed     string
		arrays    string
		wantKind  string // of the typed form
		canonical []string
	}{
		{name: "address", typ: FieldAddress, typed: `"1 Main St, Springfield"`, arrays: `["1 Main St, Springfield"]`, wantKind: "string", canonical: []string{"1 Main St, Springfield"}},
		{name: "boolean", typ: FieldBoolean, typed: `true`, arrays: `["true"]`, wantKind: "boolean", canonical: []string{"true"}},
		{name: "boolean false", typ: FieldBoolean, typed: `false`, arrays: `["false"]`, wantKind: "boolean", canonical: []string{"false"}},
		{name: "date", typ: FieldDate, typed: `"2023-01-02T00:00:00.000Z"`, arrays: `["2023-01-02"]`, wantKind: "string", canonical: []string{"2023-01-02"}},
		{name: "date with a time", typ: FieldDate, typed: `"2023-01-02T10:30:00.000+02:00"`, arrays: `["2023-01-02T08:30:00Z"]`, wantKind: "string", canonical: []string{"2023-01-02T08:30:00Z"}},
		{name: "multi-select", typ: FieldMultiSelect, typed: `["gold","vip"]`, arrays: `["gold","vip"]`, wantKind: "array", canonical: []string{"gold", "vip"}},
		{name: "number", typ: FieldNumber, typed: `43`, arrays: `["43"]`, wantKind: "number", canonical: []string{"43"}},
		{name: "number with a fraction", typ: FieldNumber, typed: `12.50`, arrays: `["12.5"]`, wantKind: "number", canonical: []string{"12.5"}},
		{name: "string", typ: FieldString, typed: `"gold"`, arrays: `["gold"]`, wantKind: "string", canonical: []string{"gold"}},
		{name: "url", typ: FieldURL, typed: `"https://ada.example"`, arrays: `["https://ada.example"]`, wantKind: "string", canonical: []string{"https://ada.example"}},
	}
	decode := func(t *testing.T, typ, value string) CustomField {
		t.Helper()
		var c Contact
		body := `{"id":"c1","customFields":[{"id":"CF1","key":"k","name":"K","type":"` + typ + `","value":` + value + `}]}`
		if err := json.Unmarshal([]byte(body), &c); err != nil {
			t.Fatalf("decode %s: %v", value, err)
		}
		if len(c.CustomFields) != 1 || c.CustomFields[0].Type != typ {
			t.Fatalf("decode %s: %+v, want one field of type %s", value, c.CustomFields, typ)
		}
		return c.CustomFields[0]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typed, arrays := decode(t, tt.typ, tt.typed), decode(t, tt.typ, tt.arrays)
			if typed.Value.Kind() != tt.wantKind || arrays.Value.Kind() != "array" {
				t.Errorf("kinds %s, %s; want %s, array", typed.Value.Kind(), arrays.Value.Kind(), tt.wantKind)
			}
			for form, f := range map[string]CustomField{"typed": typed, "arrays": arrays} {
				got, err := CanonicalText(f.Type, f.Value.Text())
				if err != nil || !reflect.DeepEqual(got, tt.canonical) {
					t.Errorf("%s form: canonical %q, %v; want %q", form, got, err, tt.canonical)
				}
			}
			for raw, f := range map[string]CustomField{tt.typed: typed, tt.arrays: arrays} {
				out, err := json.Marshal(f.Value)
				if err != nil || string(out) != compact(t, raw) {
					t.Errorf("%s encodes as %s, %v", raw, out, err)
				}
			}
			null := decode(t, tt.typ, `null`)
			if !null.Value.IsNull() || !null.Value.IsEmpty() || null.Value.Text() != nil {
				t.Errorf("null: %+v", null.Value)
			}
			if got, _ := CanonicalText(tt.typ, null.Value.Text()); got != nil {
				t.Errorf("null canonical = %q", got)
			}
		})
	}
}

func compact(t *testing.T, raw string) string {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestFieldValueDecodeRefusesOtherKinds(t *testing.T) {
	for _, raw := range []string{`{"a":1}`, `[1,2]`, `[true]`} {
		var v FieldValue
		if err := json.Unmarshal([]byte(raw), &v); !errors.Is(err, ErrFieldValue) {
			t.Errorf("%s: err %v, want ErrFieldValue", raw, err)
		}
	}
}

// TestEncodeValue checks the value syncd sends for each type in each
// form, from the text a record gives.
func TestEncodeValue(t *testing.T) {
	tests := []struct {
		typ, text     string
		typed, arrays string
		wantErr       error
	}{
		{typ: FieldAddress, text: " 1 Main St ", typed: `"1 Main St"`, arrays: `["1 Main St"]`},
		{typ: FieldBoolean, text: "TRUE", typed: `true`, arrays: `["true"]`},
		{typ: FieldBoolean, text: "no", typed: `false`, arrays: `["false"]`},
		{typ: FieldBoolean, text: "maybe", wantErr: ErrNotBoolean},
		{typ: FieldDate, text: "2023-01-02", typed: `"2023-01-02T00:00:00.000Z"`, arrays: `["2023-01-02T00:00:00.000Z"]`},
		{typ: FieldDate, text: "2023-01-02T10:30:00+02:00", typed: `"2023-01-02T08:30:00.000Z"`, arrays: `["2023-01-02T08:30:00.000Z"]`},
		{typ: FieldDate, text: "02/01/2023", wantErr: ErrNotDate},
		{typ: FieldMultiSelect, text: "gold", typed: `["gold"]`, arrays: `["gold"]`},
		{typ: FieldNumber, text: "43.0", typed: `43`, arrays: `["43"]`},
		{typ: FieldNumber, text: "-0.25", typed: `-0.25`, arrays: `["-0.25"]`},
		{typ: FieldNumber, text: "forty", wantErr: ErrNotNumber},
		{typ: FieldString, text: "gold", typed: `"gold"`, arrays: `["gold"]`},
		{typ: FieldURL, text: "https://ada.example", typed: `"https://ada.example"`, arrays: `["https://ada.example"]`},
		{typ: "", text: "x", typed: `["x"]`, arrays: `["x"]`}, // no definition: sent as an array
		{typ: FieldString, text: "", typed: `null`, arrays: `[]`},
		{typ: FieldMultiSelect, text: "", typed: `null`, arrays: `[]`},
	}
	for _, tt := range tests {
		for _, form := range []string{ValuesTyped, ValuesArrays} {
			v, err := EncodeValue(tt.typ, form, []string{tt.text})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("%s %q (%s): err %v, want %v", tt.typ, tt.text, form, err, tt.wantErr)
				}
				continue
			}
			want := tt.typed
			if form == ValuesArrays {
				want = tt.arrays
			}
			out, _ := json.Marshal(v)
			if err != nil || string(out) != want {
				t.Errorf("%s %q (%s) = %s, %v; want %s", tt.typ, tt.text, form, out, err, want)
			}
			if form == ValuesTyped && !FitsType(tt.typ, v) && tt.typ != "" {
				t.Errorf("%s %q: typed value %s does not fit its type", tt.typ, tt.text, out)
			}
		}
	}
	if _, err := EncodeValue(FieldString, ValuesTyped, []string{"a", "b"}); !errors.Is(err, ErrSeveralValue) {
		t.Errorf("two values for a string field: %v, want ErrSeveralValue", err)
	}
}

// FuzzFieldValue: whatever decodes encodes back to a value that decodes
// to the same kind and text, and its canonical text for any type is
// stable (canonical of canonical is itself).
func FuzzFieldValue(f *testing.F) {
	for _, s := range []string{`null`, `true`, `43.50`, `"2023-01-02"`, `["a","b"]`, `[]`, `"x"`, `-1e3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v FieldValue
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: marshal: %v", raw, err)
		}
		var back FieldValue
		if err := json.Unmarshal(out, &back); err != nil || back.Kind() != v.Kind() || !reflect.DeepEqual(back.Text(), v.Text()) {
			t.Fatalf("%s -> %s -> %+v, %v", raw, out, back, err)
		}
		for _, typ := range FieldTypes {
			c, err := CanonicalText(typ, v.Text())
			if err != nil {
				continue
			}
			again, err := CanonicalText(typ, c)
			if err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("%s as %s: canonical %q, again %q, %v", raw, typ, c, again, err)
			}
		}
	})
}
