package mapping

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/bench/workload"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
	"gopkg.in/yaml.v3"
)

// mustCompile compiles a spec written in YAML, as in a config file.
func mustCompile(t *testing.T, doc string, direction policy.Direction) *Mapper {
	t.Helper()
	var spec Spec
	if err := yaml.Unmarshal([]byte(doc), &spec); err != nil {
		t.Fatal(err)
	}
	m, err := Compile(spec, direction, nil)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return m
}

// crmSpec is the mapping the benchmarks measure (workload.CRMSpec).
const crmSpec = workload.CRMSpec

func TestFieldSpecYAML(t *testing.T) {
	var spec Spec
	if err := yaml.Unmarshal([]byte(crmSpec), &spec); err != nil {
		t.Fatal(err)
	}
	want := map[string]FieldSpec{
		"firstName":           {From: "first_name"},
		"lastName":            {From: "last_name", Transform: []string{"trim"}},
		"company":             {From: "company"},
		"emails.work":         {From: "email", Transform: []string{"email"}},
		"phoneNumbers.mobile": {From: "mobile", Transform: []string{"e164"}, Region: "US"},
		"custom.tags":         {From: "tags", Transform: []string{"split:;"}},
		"custom.lifecycle":    {From: "stage", Direction: "to-workspace"},
	}
	if !reflect.DeepEqual(spec.Fields, want) {
		t.Fatalf("fields = %+v\nwant %+v", spec.Fields, want)
	}
	err := yaml.Unmarshal([]byte("fields: {firstName: {form: x}}"), &spec)
	if err == nil || !strings.Contains(err.Error(), `unknown key "form"`) {
		t.Fatalf("unknown key: err = %v", err)
	}
}

func TestToContact(t *testing.T) {
	m := mustCompile(t, crmSpec, Both)
	r := connector.Record{ID: "42", Fields: map[string]any{
		"id": int64(42), "first_name": " Ann ", "last_name": "Lee", "company": nil,
		"email": "Ann.Lee@Example.com", "mobile": "(415) 555-0100", "tags": "vip; b2b ;vip", "stage": "lead",
	}}
	got, err := m.ToContact(r)
	if err != nil {
		t.Fatal(err)
	}
	want := Mapped{ExternalID: "42", SourceURL: "https://crm.example.com/contacts/42", Fields: Fields{
		"firstName": "Ann", "lastName": "Lee", "emails.work": "ann.lee@example.com",
		"phoneNumbers.mobile": "+14155550100", "custom.tags": "b2b\x1fvip", "custom.lifecycle": "lead",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ToContact = %+v\nwant %+v", got, want)
	}
	if got, want := m.SourceFields(), []string{"company", "email", "first_name", "id", "last_name", "mobile", "stage", "tags"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SourceFields = %v, want %v", got, want)
	}
	if got, want := m.ForwardTargets(), []string{"company", "custom.lifecycle", "custom.tags", "emails.work", "firstName", "lastName", "phoneNumbers.mobile"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ForwardTargets = %v, want %v", got, want)
	}
	if got := m.ReverseTargets(); contains(got, "custom.lifecycle") || !contains(got, "firstName") {
		t.Errorf("ReverseTargets = %v: want firstName and not the to-workspace custom.lifecycle", got)
	}
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

func TestToContactRecordErrors(t *testing.T) {
	m := mustCompile(t, crmSpec, Both)
	tests := []struct {
		name      string
		fields    map[string]any
		wantField string
		wantFrom  string
		wantErr   error
		wantText  string
	}{
		{name: "no externalId", fields: map[string]any{"first_name": "Ann"}, wantField: "externalId", wantFrom: "id", wantErr: ErrNoExternalID},
		{name: "blank externalId", fields: map[string]any{"id": "  ", "first_name": "Ann"}, wantField: "externalId", wantErr: ErrNoExternalID},
		{name: "externalId too long", fields: map[string]any{"id": strings.Repeat("x", 76), "first_name": "Ann"}, wantField: "externalId", wantErr: ErrTooLong},
		{name: "invalid email", fields: map[string]any{"id": "7", "first_name": "Ann", "email": "ann at x"}, wantField: "emails.work", wantErr: ErrInvalidEmail},
		{name: "list for single value", fields: map[string]any{"id": "7", "first_name": []string{"Ann", "Bo"}}, wantField: "firstName", wantErr: ErrSeveralValues},
		{name: "no first name nor fallback", fields: map[string]any{"id": "7", "last_name": "Lee"}, wantField: "firstName", wantFrom: "first_name", wantErr: ErrNoFirstName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := connector.Record{ID: "7", Fields: tt.fields}
			_, err := m.ToContact(r)
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RecordError", err)
			}
			if re.RecordID != "7" || re.Field != tt.wantField || (tt.wantFrom != "" && re.From != tt.wantFrom) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %#v (%v), want field %s from %s wrapping %v", re, err, tt.wantField, tt.wantFrom, tt.wantErr)
			}
			if tt.wantText != "" && err.Error() != tt.wantText {
				t.Fatalf("text = %q, want %q", err.Error(), tt.wantText)
			}
		})
	}
}

func TestToContactReportsEveryFieldError(t *testing.T) {
	m := mustCompile(t, strings.Replace(crmSpec, "region: US }", "region: US, onInvalid: dead-letter }", 1), Both)
	_, err := m.ToContact(connector.Record{ID: "9", Fields: map[string]any{"id": "9", "first_name": "A", "mobile": "1", "email": "bad"}})
	for _, want := range []string{"emails.work", "phoneNumbers.mobile"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %s", err, want)
		}
	}
}

func TestFirstNameFallback(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		fields  map[string]any
		want    string
		wantErr bool
	}{
		{name: "default uses e-mail local part", spec: "fields: {emails.work: email, phoneNumbers.m: phone}",
			fields: map[string]any{"email": "Ann.Lee@x.com", "phone": "+14155550100"}, want: "ann.lee"},
		{name: "default then phone", spec: "fields: {emails.work: email, phoneNumbers.m: phone}",
			fields: map[string]any{"phone": "415 555 0100"}, want: "+14155550100"},
		{name: "default gives up", spec: "fields: {emails.work: email, lastName: last}",
			fields: map[string]any{"last": "Lee"}, wantErr: true},
		{name: "configured chain in order", spec: "fields: {firstName: first, emails.work: email}\nfirstNameFallback: [company, '@email', 'default:Unknown']",
			fields: map[string]any{"company": "  ", "email": "bo@x.com"}, want: "bo"},
		{name: "configured literal", spec: "fields: {firstName: first}\nfirstNameFallback: [company, 'default:Unknown']",
			fields: map[string]any{}, want: "Unknown"},
		{name: "mapped name wins", spec: "fields: {firstName: first}\nfirstNameFallback: ['default:Unknown']",
			fields: map[string]any{"first": "Cy"}, want: "Cy"},
		{name: "default transform counts as mapped", spec: "fields: {firstName: {from: first, transform: ['default:Friend']}}",
			fields: map[string]any{}, want: "Friend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustCompile(t, tt.spec, ToWorkspace)
			got, err := m.ToContact(connector.Record{ID: "1", Fields: tt.fields})
			if tt.wantErr {
				if !errors.Is(err, ErrNoFirstName) {
					t.Fatalf("err = %v, want ErrNoFirstName", err)
				}
				return
			}
			if err != nil || got.Fields["firstName"] != tt.want {
				t.Fatalf("firstName = %q, %v; want %q", got.Fields["firstName"], err, tt.want)
			}
			if got.ExternalID != "1" {
				t.Errorf("externalId = %q, want the record ID", got.ExternalID)
			}
		})
	}
}

func TestSourceURL(t *testing.T) {
	tests := []struct {
		name, tmpl string
		fields     map[string]any
		want       string
		wantErr    string
	}{
		{name: "field", tmpl: "https://crm/c/{{ .id }}", fields: map[string]any{"id": int64(5)}, want: "https://crm/c/5"},
		{name: "index and urlquery", tmpl: `https://crm/c?q={{ urlquery (index . "full name") }}`, fields: map[string]any{"full name": "a b"}, want: "https://crm/c?q=a+b"},
		{name: "missing field", tmpl: "https://crm/c/{{ .idd }}", fields: map[string]any{"id": "5"}, wantErr: "invalid sourceUrl"},
		{name: "not absolute", tmpl: "crm/{{ .id }}", fields: map[string]any{"id": "5"}, wantErr: "not an absolute URL"},
		{name: "too long", tmpl: "https://crm/{{ .id }}", fields: map[string]any{"id": strings.Repeat("x", 200)}, wantErr: "at most 200"},
		{name: "empty result", tmpl: "{{ .u }}", fields: map[string]any{"u": nil}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Compile(Spec{SourceURL: tt.tmpl, Fields: map[string]FieldSpec{"firstName": {From: "n"}}, FirstNameFallback: []string{"default:x"}}, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.ToContact(connector.Record{ID: "1", Fields: tt.fields})
			if tt.wantErr != "" {
				var re *RecordError
				if !errors.As(err, &re) || re.Field != "sourceUrl" || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a sourceUrl RecordError with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.SourceURL != tt.want {
				t.Fatalf("SourceURL = %q, %v; want %q", got.SourceURL, err, tt.want)
			}
		})
	}
	m, _ := Compile(Spec{SourceURL: `{{ .a }}/{{ if .b }}{{ index . "c" }}{{ end }}`, Fields: map[string]FieldSpec{"firstName": {From: "n"}}}, "", nil)
	if got, want := m.SourceFields(), []string{"a", "b", "c", "n"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SourceFields = %v, want %v (fields of the template)", got, want)
	}
}

func TestCompileProblems(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		direction policy.Direction
		custom    []string
		want      []string // "path: message prefix"
	}{
		{name: "no fields", spec: "externalId: id", want: []string{"fields: no fields are mapped"}},
		{name: "unknown transform", spec: "fields: {firstName: {from: f, transform: [lowr]}}",
			want: []string{`fields.firstName: unknown transform "lowr" (known: default:<value>, e164, email,`}},
		{name: "unknown target", spec: "fields: {fristName: f, emails.work: e}", want: []string{`fields.fristName: unknown target "fristName" (known: firstName,`}},
		{name: "externalId as a field", spec: "fields: {externalId: id, firstName: f}", want: []string{"fields.externalId: externalId is not a field"}},
		{name: "empty label", spec: "fields: {firstName: f, 'emails.': e}", want: []string{"fields.emails.: target \"emails.\" needs a label"}},
		{name: "empty from", spec: "fields: {firstName: ''}", want: []string{"fields.firstName: no record field to map from"}},
		{name: "bad direction", spec: "fields: {firstName: {from: f, direction: sideways}}", want: []string{`fields.firstName: unknown direction "sideways"`}},
		{name: "field beyond connector", spec: "fields: {firstName: {from: f, direction: both}}", direction: ToWorkspace,
			want: []string{"fields.firstName: direction both goes beyond the connector's direction to-workspace"}},
		{name: "list into single", spec: "fields: {firstName: {from: f, transform: ['split:,']}}", want: []string{"fields.firstName: split makes a list"}},
		{name: "pick from zero", spec: "fields: {firstName: f, emails.w: {from: e, transform: ['split: ::: ', 'pick:0']}}", want: []string{`fields.emails.w: transform "pick:0": position "0" is not a number from 1`}},
		{name: "pick flowing back", spec: "fields: {firstName: f, emails.w: {from: e, transform: ['split: ::: ', 'pick:2']}}", direction: Both,
			want: []string{"fields.emails.w: pick:2 has no way back, and the field flows both"}},
		{name: "two joins", spec: "fields: {custom.t: {from: t, transform: ['join:,', 'join:;']}, firstName: f}", want: []string{"fields.custom.t: join:; follows a join"}},
		{name: "bad region", spec: "fields: {firstName: f, phoneNumbers.m: {from: p, region: XX}}", want: []string{`fields.phoneNumbers.m: unknown region "XX"`}},
		{name: "region on a name", spec: "fields: {firstName: {from: f, region: US}}", want: []string{"fields.firstName: region applies only to phone numbers"}},
		{name: "unknown custom key", spec: "fields: {firstName: f, custom.stage: s}", custom: []string{"tier"}, want: []string{`fields.custom.stage: the workspace has no custom field with key "stage"`}},
		{name: "two fields write one column back", spec: "fields: {firstName: n, lastName: n}", direction: Both, want: []string{`fields.lastName: record field "n" is also written back by fields.firstName`}},
		{name: "bad template", spec: "sourceUrl: '{{ .id '\nfields: {firstName: f}", want: []string{"sourceUrl: invalid template"}},
		{name: "nothing for first name", spec: "fields: {lastName: l}", want: []string{"fields.firstName: not mapped, and nothing can stand in for it"}},
		{name: "fallback entries", spec: "fields: {firstName: f}\nfirstNameFallback: ['', 'default:', '@email', '@who']",
			want: []string{"firstNameFallback[0]: empty entry", "firstNameFallback[1]: default: needs a value", "firstNameFallback[2]: @email needs a mapped e-mail address", `firstNameFallback[3]: unknown fallback "@who"`}},
		{name: "every problem at once", spec: "fields: {firstName: {from: f, transform: [lowr, uper]}, bogus: x}",
			want: []string{`fields.bogus: unknown target`, `fields.firstName: unknown transform "lowr"`, `fields.firstName: unknown transform "uper"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spec Spec
			if err := yaml.Unmarshal([]byte(tt.spec), &spec); err != nil {
				t.Fatal(err)
			}
			_, err := Compile(spec, tt.direction, tt.custom)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SpecError", err)
			}
			if len(se.Problems) != len(tt.want) {
				t.Fatalf("problems:\n%v\nwant %d: %v", err, len(tt.want), tt.want)
			}
			for i, p := range se.Problems {
				if !strings.HasPrefix(p.Path+": "+p.Message, tt.want[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, p.Path+": "+p.Message, tt.want[i])
				}
				if p.Hint == "" {
					t.Errorf("problem %q has no hint", p)
				}
			}
		})
	}
}

// TestPickGivesEachValueOfACellATarget: Google Contacts writes two
// numbers of one label in one cell ("a ::: b"); split and pick give each
// its own phone target, and a cell with one value leaves the second
// target empty.
func TestPickGivesEachValueOfACellATarget(t *testing.T) {
	m := mustCompile(t, `fields:
  firstName: name
  phoneNumbers.mobile: {from: phones, transform: ["split: ::: ", "pick:1"], region: US}
  phoneNumbers.mobile2: {from: phones, transform: ["split: ::: ", "pick:2"], region: US}
  emails.home: {from: mails, transform: ["split: ::: ", "pick:1"]}`, ToWorkspace)
	tests := []struct {
		name, phones, mails string
		want                Fields
	}{
		{"two numbers, one address", "+1 646-555-0142 ::: (917) 555-0133", "Ada@Example.com", Fields{"firstName": "Ada", "phoneNumbers.mobile": "+16465550142", "phoneNumbers.mobile2": "+19175550133", "emails.home": "ada@example.com"}},
		{"one number", "646-555-0142", "", Fields{"firstName": "Ada", "phoneNumbers.mobile": "+16465550142"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.ToContact(connector.Record{ID: "1", Fields: map[string]any{"name": "Ada", "phones": tt.phones, "mails": tt.mails}})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Fields.Equal(tt.want) {
				t.Fatalf("fields %v, want %v", got.Fields, tt.want)
			}
		})
	}
}

// TestSplitAtLineBreaks: a cell typed with a line break between two
// numbers splits at it; the separator is not trimmed away.
func TestSplitAtLineBreaks(t *testing.T) {
	m := mustCompile(t, "fields:\n  firstName: name\n  phoneNumbers.mobile2: {from: tel, transform: [\"split:\\n\", \"pick:2\"]}", ToWorkspace)
	got, err := m.ToContact(connector.Record{ID: "1", Fields: map[string]any{"name": "Steve", "tel": "+1 408 555 0101\n+1 408 555 0102"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Fields{"firstName": "Steve", "phoneNumbers.mobile2": "+14085550102"}); !got.Fields.Equal(want) {
		t.Fatalf("fields %v, want %v", got.Fields, want)
	}
}

func TestDescribe(t *testing.T) {
	m := mustCompile(t, "fields: {firstName: f, phoneNumbers.m: {from: p, transform: [trim, e164], direction: to-crm}, custom.s: {from: s, direction: to-workspace}}", Both)
	want := []string{"custom.s <- s", "firstName <-> f", "phoneNumbers.m -> p [trim, e164]"}
	if got := m.Describe(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Describe = %q, want %q", got, want)
	}
}
