package mapping

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/connector"
)

// The phone numbers users type in CRMs (issue 22): each either becomes a
// possible E.164 number, or is refused with ErrInvalidPhone and a reason.
func TestNormalizePhoneTypedByUsers(t *testing.T) {
	tests := []struct {
		name, in, region string
		want             string
		wantErr          []string // substrings of the error; nil: no error
	}{
		{name: "n/a", in: "n/a", region: "US", wantErr: []string{`"n/a"`, "not a phone number"}},
		{name: "0049 30 1234567 under US", in: "0049 30 1234567", region: "US",
			wantErr: []string{"too long", "00 is not the international prefix in US", "dialled 011 49 30 1234567", "+49 30 1234567", "region"}},
		{name: "0049 30 1234567 under DE", in: "0049 30 1234567", region: "DE", want: "+49301234567"},
		{name: "0049 30 1234567 under default region", in: "0049 30 1234567", wantErr: []string{"region US", "too long"}},
		{name: "011 49 30 1234567 under US", in: "011 49 30 1234567", region: "US", want: "+49301234567"},
		{name: "national DE under DE", in: "030 1234567", region: "DE", want: "+49301234567"},
		{name: "555-0100 local only", in: "555-0100", region: "US", wantErr: []string{"only possible as a local number", "add the area code"}},
		{name: "555 0100 local only, default region", in: "555 0100", wantErr: []string{"only possible as a local number"}},
		{name: "+15550100 is not E.164", in: "+15550100", region: "US", wantErr: []string{"only possible as a local number"}},
		{name: "valid US national", in: "(415) 555-0100", region: "US", want: "+14155550100"},
		{name: "valid US international", in: "+1 415 555 0100", region: "DE", want: "+14155550100"},
		{name: "valid GB", in: "+44 20 7946 0958", region: "US", want: "+442079460958"},
		{name: "valid FR national", in: "01 23 45 67 89", region: "FR", want: "+33123456789"},
		{name: "extension dropped", in: "415-555-0100 ext. 12", region: "US", want: "+14155550100"},
		{name: "extension with x", in: "+1 415 555 0100 x7", region: "US", want: "+14155550100"},
		{name: "blank", in: "   ", region: "US", want: ""},
		{name: "empty", in: "", want: ""},
		{name: "too short", in: "12", region: "US", wantErr: []string{"too short"}},
		{name: "unknown country code", in: "+999 1234 5678", region: "US", wantErr: []string{"country code"}},
		{name: "E.164 form that reads back otherwise", in: "0000000", region: "DE", wantErr: []string{"does not read back as itself"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizePhone(tt.in, tt.region)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("NormalizePhone(%q, %q) = %q, %v; want %q", tt.in, tt.region, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalidPhone) || got != "" {
				t.Fatalf("NormalizePhone(%q, %q) = %q, %v; want ErrInvalidPhone", tt.in, tt.region, got, err)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A phone number that does not map leaves the record whole: the record
// maps without it, and the phone comes back as a field warning.
func TestToContactSkipsBadPhone(t *testing.T) {
	const spec = `
externalId: id
fields:
  firstName: first_name
  lastName: last_name
  emails.work: { from: email, transform: email }
  phoneNumbers.mobile: { from: mobile, transform: e164 }
  phoneNumbers.office: { from: office, region: DE }
`
	m := mustCompile(t, spec, Both)
	tests := []struct {
		name           string
		mobile, office any
		wantPhones     map[string]string // target -> E.164; absent: left out
		wantWarned     []string          // targets warned about, in order
	}{
		{name: "n/a", mobile: "n/a", wantWarned: []string{"phoneNumbers.mobile"}},
		{name: "0049 30 1234567 under US", mobile: "0049 30 1234567", wantWarned: []string{"phoneNumbers.mobile"}},
		{name: "0049 30 1234567 under DE", office: "0049 30 1234567", wantPhones: map[string]string{"phoneNumbers.office": "+49301234567"}},
		{name: "555-0100", mobile: "555-0100", wantWarned: []string{"phoneNumbers.mobile"}},
		{name: "valid numbers", mobile: "(415) 555-0100", office: "030 1234567",
			wantPhones: map[string]string{"phoneNumbers.mobile": "+14155550100", "phoneNumbers.office": "+49301234567"}},
		{name: "extension", mobile: "415-555-0100 ext. 12", wantPhones: map[string]string{"phoneNumbers.mobile": "+14155550100"}},
		{name: "blank", mobile: "  ", office: ""},
		{name: "both bad", mobile: "n/a", office: "555", wantWarned: []string{"phoneNumbers.mobile", "phoneNumbers.office"}},
		{name: "one bad one good", mobile: "n/a", office: "+49 30 1234567",
			wantPhones: map[string]string{"phoneNumbers.office": "+49301234567"}, wantWarned: []string{"phoneNumbers.mobile"}},
		{name: "number typed as an integer", mobile: int64(5550100), wantWarned: []string{"phoneNumbers.mobile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := connector.Record{ID: "r1", Fields: map[string]any{"id": "r1", "first_name": "Ada", "last_name": "Lovelace",
				"email": "Ada@Example.com", "mobile": tt.mobile, "office": tt.office}}
			got, err := m.ToContact(rec)
			if err != nil {
				t.Fatalf("ToContact: %v; want the record mapped", err)
			}
			if got.ExternalID != "r1" || got.Fields["firstName"] != "Ada" || got.Fields["lastName"] != "Lovelace" || got.Fields["emails.work"] != "ada@example.com" {
				t.Fatalf("other fields = %q (externalId %q), want them all", got.Fields, got.ExternalID)
			}
			for _, k := range []string{"phoneNumbers.mobile", "phoneNumbers.office"} {
				if got.Fields[k] != tt.wantPhones[k] {
					t.Errorf("%s = %q, want %q", k, got.Fields[k], tt.wantPhones[k])
				}
			}
			warned := got.WarnedTargets()
			if strings.Join(warned, ",") != strings.Join(tt.wantWarned, ",") {
				t.Fatalf("warnings on %q, want %q (%v)", warned, tt.wantWarned, got.Warnings)
			}
			for _, w := range got.Warnings {
				raw := toString(rec.Fields[w.From])
				if w.Value != raw || !errors.Is(w.Err, ErrInvalidPhone) || !strings.Contains(w.String(), w.Field) || !strings.Contains(w.String(), "synced without it") {
					t.Errorf("warning %+v: want the record's value %q, ErrInvalidPhone and a text naming the field", w, raw)
				}
			}
		})
	}
}

// onInvalid: dead-letter keeps the old behaviour: the record does not map.
func TestOnInvalidDeadLetter(t *testing.T) {
	m := mustCompile(t, "fields: {firstName: name, phoneNumbers.mobile: {from: mobile, onInvalid: dead-letter}, phoneNumbers.work: work}", Both)
	tests := []struct {
		name, mobile, work string
		wantErr            bool
		wantWarned         string
	}{
		{name: "bad phone of a dead-letter field fails the record", mobile: "n/a", wantErr: true},
		{name: "local-only number of a dead-letter field fails the record", mobile: "555-0100", wantErr: true},
		{name: "good phone maps", mobile: "+14155550100"},
		{name: "bad phone of the other field is only warned", mobile: "+14155550100", work: "n/a", wantWarned: "phoneNumbers.work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.ToContact(connector.Record{ID: "r", Fields: map[string]any{"name": "Ann", "mobile": tt.mobile, "work": tt.work}})
			if tt.wantErr {
				var re *RecordError
				if !errors.As(err, &re) || re.Field != "phoneNumbers.mobile" || re.From != "mobile" || !errors.Is(err, ErrInvalidPhone) {
					t.Fatalf("err = %v, want a RecordError on phoneNumbers.mobile wrapping ErrInvalidPhone", err)
				}
				return
			}
			if err != nil || strings.Join(got.WarnedTargets(), ",") != tt.wantWarned {
				t.Fatalf("ToContact = %v, %v; want warnings on %q", got.WarnedTargets(), err, tt.wantWarned)
			}
		})
	}
}

// A bad onInvalid names its field; onInvalid on a field that is no phone
// number is refused.
func TestOnInvalidSpecProblems(t *testing.T) {
	tests := []struct {
		name, spec string
		wantPath   string
		wantText   string
	}{
		{name: "unknown value", spec: "fields: {firstName: n, phoneNumbers.mobile: {from: m, onInvalid: drop}}",
			wantPath: "fields.phoneNumbers.mobile.onInvalid", wantText: `unknown value "drop"`},
		{name: "not a phone field", spec: "fields: {firstName: {from: n, onInvalid: skip-field}}",
			wantPath: "fields.firstName.onInvalid", wantText: "applies only to phone numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(mustSpec(t, tt.spec), Both, nil)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a SpecError", err)
			}
			for _, p := range se.Problems {
				if p.Path == tt.wantPath && strings.Contains(p.Message, tt.wantText) && p.Hint != "" {
					return
				}
			}
			t.Fatalf("problems %v: want %s: %s with a hint", se.Problems, tt.wantPath, tt.wantText)
		})
	}
	for _, ok := range []string{
		"fields: {firstName: n, phoneNumbers.mobile: {from: m, onInvalid: skip-field}}",
		"fields: {firstName: n, custom.fax: {from: f, transform: e164, onInvalid: dead-letter}}",
	} {
		if _, err := Compile(mustSpec(t, ok), Both, nil); err != nil {
			t.Errorf("Compile(%s): %v", ok, err)
		}
	}
}

func mustSpec(t *testing.T, doc string) Spec {
	t.Helper()
	var spec Spec
	if err := yaml.Unmarshal([]byte(doc), &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// FuzzPhoneNeverHoldsBackItsRecord: whatever a user types in a phone
// field, the record maps (with onInvalid's default), the phone either
// becomes a possible E.164 number that normalises to itself, or is left
// out with a warning wrapping ErrInvalidPhone that carries the value.
func FuzzPhoneNeverHoldsBackItsRecord(f *testing.F) {
	for _, s := range []string{"n/a", "0049 30 1234567", "555-0100", "+1 415 555 0100", "415-555-0100 ext. 12", "", "  ", "+", "00", "011 44 20 7946 0958", "++1", "tel:+14155550100"} {
		f.Add(s, byte(0))
	}
	regions := []string{"US", "DE", "GB", "FR", "CA"}
	m := map[string]*Mapper{}
	for _, r := range regions {
		spec := Spec{ExternalID: "id", Fields: map[string]FieldSpec{"firstName": {From: "name"}, "phoneNumbers.mobile": {From: "phone", Region: r}}}
		mp, err := Compile(spec, Both, nil)
		if err != nil {
			f.Fatal(err)
		}
		m[r] = mp
	}
	f.Fuzz(func(t *testing.T, in string, pick byte) {
		region := regions[int(pick)%len(regions)]
		got, err := m[region].ToContact(connector.Record{ID: "r", Fields: map[string]any{"id": "r", "name": "Ann", "phone": in}})
		if err != nil {
			t.Fatalf("phone %q in %s held back its record: %v", in, region, err)
		}
		phone, warned := got.Fields["phoneNumbers.mobile"], len(got.Warnings) > 0
		switch {
		case phone != "" && warned:
			t.Fatalf("phone %q in %s both mapped (%q) and warned", in, region, phone)
		case warned:
			w := got.Warnings[0]
			if w.Value != in || !errors.Is(w.Err, ErrInvalidPhone) {
				t.Fatalf("warning %+v for %q", w, in)
			}
		case phone != "":
			if phone[0] != '+' {
				t.Fatalf("phone %q in %s mapped to %q, not E.164", in, region, phone)
			}
			for _, r := range regions {
				if again, err := NormalizePhone(phone, r); err != nil || again != phone {
					t.Fatalf("%q -> %q does not normalise to itself in %s: %q, %v", in, phone, r, again, err)
				}
			}
		}
	})
}
