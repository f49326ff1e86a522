package mapping

import (
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

func TestFingerprint(t *testing.T) {
	m := mustCompile(t, crmSpec, ToWorkspace)
	rec := func(edit func(f map[string]any)) connector.Record {
		r := benchRecord(7)
		r.Fields["unmapped"] = "x"
		r.Fields["when"] = time.Unix(5, 0)
		if edit != nil {
			edit(r.Fields)
		}
		return r
	}
	base := m.Fingerprint(rec(nil), "seal")
	cases := []struct {
		name string
		fp   [8]byte
		same bool
	}{
		{"same record again", m.Fingerprint(rec(nil), "seal"), true},
		{"an unmapped column edited", m.Fingerprint(rec(func(f map[string]any) { f["unmapped"] = "y" }), "seal"), true},
		{"an unmapped column added", m.Fingerprint(rec(func(f map[string]any) { f["new"] = 1 }), "seal"), true},
		{"same mapping compiled again", mustCompile(t, crmSpec, ToWorkspace).Fingerprint(rec(nil), "seal"), true},
		{"a mapped column edited", m.Fingerprint(rec(func(f map[string]any) { f["last_name"] = "Byron" }), "seal"), false},
		{"white space of a mapped column", m.Fingerprint(rec(func(f map[string]any) { f["company"] = "Analytical Engines Ltd " }), "seal"), false},
		{"a mapped column's type", m.Fingerprint(rec(func(f map[string]any) { f["tags"] = []string{"vip"} }), "seal"), false},
		{"a mapped column removed", m.Fingerprint(rec(func(f map[string]any) { delete(f, "stage") }), "seal"), false},
		{"another seal", m.Fingerprint(rec(nil), "other"), false},
		{"another mapping", mustCompile(t, crmSpec+"  role: stage\n", ToWorkspace).Fingerprint(rec(nil), "seal"), false},
		{"onInvalid: dead-letter", mustCompile(t, strings.Replace(crmSpec, "region: US }", "region: US, onInvalid: dead-letter }", 1), ToWorkspace).Fingerprint(rec(nil), "seal"), false},
		{"onInvalid: skip-field, the default", mustCompile(t, strings.Replace(crmSpec, "region: US }", "region: US, onInvalid: skip-field }", 1), ToWorkspace).Fingerprint(rec(nil), "seal"), true},
		{"another transform", mustCompile(t, `
externalId: id
sourceUrl: "https://crm.example.com/contacts/{{ .id }}"
fields:
  firstName: first_name
  lastName: { from: last_name, transform: [trim, upper] }
  company: company
  emails.work: { from: email, transform: [email] }
  phoneNumbers.mobile: { from: mobile, transform: [e164], region: US }
  custom.tags: { from: tags, transform: ["split:;"] }
  custom.lifecycle: { from: stage, direction: to-workspace }
`, ToWorkspace).Fingerprint(rec(nil), "seal"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.fp == base) != c.same {
				t.Fatalf("fingerprint equal = %v, want %v", c.fp == base, c.same)
			}
		})
	}
	other := rec(nil)
	other.ID = "8"
	if m.Fingerprint(other, "seal") == base {
		t.Fatal("the record's own ID is not part of the fingerprint")
	}
}

// TestFingerprintTemplateReadingTheRecord: a sourceUrl template that may
// read any field makes every field part of the fingerprint.
func TestFingerprintTemplateReadingTheRecord(t *testing.T) {
	for _, tmpl := range []string{`https://x.example/{{ printf "%v" . }}`, `https://x.example/{{ range $k, $v := . }}{{ $v }}{{ end }}`, `https://x.example/{{ with .id }}{{ . }}{{ end }}`} {
		m := mustCompile(t, "externalId: id\nsourceUrl: '"+tmpl+"'\nfields:\n  firstName: first_name\n", ToWorkspace)
		a := connector.Record{ID: "1", Fields: map[string]any{"id": "1", "first_name": "Ada", "other": "a"}}
		b := connector.Record{ID: "1", Fields: map[string]any{"id": "1", "first_name": "Ada", "other": "b"}}
		if m.Fingerprint(a, "") == m.Fingerprint(b, "") {
			t.Errorf("%s: a field the template may read is not in the fingerprint", tmpl)
		}
	}
	m := mustCompile(t, "externalId: id\nsourceUrl: 'https://x.example/{{ index . \"the id\" }}/{{ .id }}'\nfields:\n  firstName: first_name\n", ToWorkspace)
	a := connector.Record{ID: "1", Fields: map[string]any{"id": "1", "the id": "1", "first_name": "Ada", "other": "a"}}
	b := connector.Record{ID: "1", Fields: map[string]any{"id": "1", "the id": "1", "first_name": "Ada", "other": "b"}}
	if m.Fingerprint(a, "") != m.Fingerprint(b, "") {
		t.Error("a template naming its fields reads every field")
	}
	b.Fields["the id"] = "2"
	if m.Fingerprint(a, "") == m.Fingerprint(b, "") {
		t.Error("a field read with index is not in the fingerprint")
	}
}

// BenchmarkFingerprint is the check of every record of every pass: the
// fingerprint of the raw record, compared with the link's.
func BenchmarkFingerprint(b *testing.B) {
	m := mustCompileB(b, crmSpec, ToWorkspace)
	recs := make([]connector.Record, 1024)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	want := m.Fingerprint(recs[0], "seal")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if m.Fingerprint(recs[i%len(recs)], "seal") == want && i%len(recs) != 0 {
			b.Fatal("collision")
		}
		i++
	}
}

type fieldTypes map[string]string

func (f fieldTypes) CustomFieldType(key string) string { return f[key] }

// TestFingerprintFollowsCustomFieldTypes: a custom field's type decides
// its canonical value, so a type changed in the workspace changes the
// fingerprint of every record that maps to it.
func TestFingerprintFollowsCustomFieldTypes(t *testing.T) {
	m := mustCompile(t, crmSpec, ToWorkspace)
	types := fieldTypes{"tags": "multi-select", "lifecycle": "string"}
	m.SetCustomFieldTypes(types)
	r := benchRecord(3)
	before := m.Fingerprint(r, "seal")
	if m.Fingerprint(r, "seal") != before {
		t.Fatal("fingerprint not stable")
	}
	types["lifecycle"] = "number"
	if m.Fingerprint(r, "seal") == before {
		t.Fatal("a custom field's new type leaves the fingerprint as it was")
	}
}
