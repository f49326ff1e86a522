package mapping

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

// roundTripSpec maps one `both` field per kind of transform chain.
const roundTripSpec = `
externalId: id
fields:
  firstName: first
  lastName: { from: last, transform: [trim, upper] }
  company: { from: company, transform: [lower] }
  role: { from: role, transform: ["default:Staff"] }
  emails.work: { from: email, transform: [email] }
  phoneNumbers.mobile: { from: mobile, transform: [e164], region: GB }
  custom.tags: { from: tags, transform: ["split:;"] }
  custom.colors: colors
  custom.path: { from: path, transform: ["join:/"] }
  custom.note: { from: note, direction: to-workspace }
`

// contactOf plays the workspace: the contact a create body makes.
func contactOf(b workspace.ContactCreate) workspace.Contact {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	c := workspace.Contact{ID: "c1", ExternalID: opt(b.ExternalID), Source: opt(b.Source), SourceURL: opt(b.SourceURL)}
	df := b.DefaultFields
	c.DefaultFields = workspace.DefaultFields{FirstName: opt(df.FirstName), LastName: opt(df.LastName), Company: opt(df.Company), Role: opt(df.Role)}
	for i, it := range df.Emails {
		c.DefaultFields.Emails = append(c.DefaultFields.Emails, workspace.Item{ID: fmt.Sprint("E", i), Name: it.Name, Value: it.Value})
	}
	for i, it := range df.PhoneNumbers {
		c.DefaultFields.PhoneNumbers = append(c.DefaultFields.PhoneNumbers, workspace.Item{ID: fmt.Sprint("P", i), Name: it.Name, Value: it.Value})
	}
	for _, cf := range b.CustomFields {
		c.CustomFields = append(c.CustomFields, workspace.CustomField{Key: cf.Key, Value: cf.Value})
	}
	return c
}

type gen struct{ r *rand.Rand }

func (g gen) word(alphabet string) string {
	runes := []rune(alphabet)
	b := make([]rune, 1+g.r.IntN(8))
	for i := range b {
		b[i] = runes[g.r.IntN(len(runes))]
	}
	return string(b)
}

func (g gen) words(alphabet string, min int) []string {
	set := map[string]bool{}
	for n := min + g.r.IntN(4); len(set) < n; {
		set[g.word(alphabet)] = true
	}
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

const (
	lowerABC = "abcdefghijklmnopqrstuvwxyz"
	mixedABC = "abcdefghijklmnopqrstuvwxyzABCXYZéß-' "
)

// canonicalRecord returns a record whose values are already in the form
// the chains produce, so that the round trip must give it back exactly.
func (g gen) canonicalRecord(id int) connector.Record {
	f := map[string]any{"id": fmt.Sprint(id), "first": strings.TrimSpace("A" + g.word(mixedABC) + "z")}
	maybe := func(k string, v func() any) {
		if g.r.IntN(4) > 0 {
			f[k] = v()
		}
	}
	maybe("last", func() any { return strings.ToUpper(g.word(lowerABC)) })
	maybe("company", func() any { return "c" + g.word(lowerABC+" ") + "x" })
	// default: is lossy on an empty value only, so role is always set.
	f["role"] = "r" + g.word(mixedABC) + "r"
	maybe("email", func() any { return g.word(lowerABC) + "@" + g.word(lowerABC) + ".com" })
	maybe("mobile", func() any { return fmt.Sprintf("+44207946%04d", g.r.IntN(10000)) })
	maybe("tags", func() any { return strings.Join(g.words(lowerABC, 1), ";") })
	maybe("colors", func() any {
		if g.r.IntN(2) == 0 {
			return g.word(lowerABC) // one value: a string
		}
		return g.words(lowerABC, 2) // several: a sorted list
	})
	maybe("path", func() any { return g.words(lowerABC, 1) })
	return connector.Record{ID: fmt.Sprint(id), Fields: f}
}

// Round trip record -> contact -> record is the identity on every `both`
// field, and the contact reads back to exactly the Fields written (so
// syncd's own write is recognised as an echo).
func TestRoundTripIdentity(t *testing.T) {
	m := mustCompile(t, roundTripSpec, Both)
	g := gen{rand.New(rand.NewPCG(1, 2))}
	for i := 0; i < 500; i++ {
		r := g.canonicalRecord(i)
		mapped, err := m.ToContact(r)
		if err != nil {
			t.Fatalf("record %v: %v", r.Fields, err)
		}
		c := contactOf(CreateBody("custom-test", mapped))
		back := m.FromContact(c)
		if back.Hash() != mapped.Fields.Hash() {
			t.Fatalf("record %v: contact reads back as\n%q\nwrote\n%q", r.Fields, back, mapped.Fields)
		}
		rec, err := m.ToRecord(back)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rec["note"]; ok {
			t.Fatal("a to-workspace field was mapped back")
		}
		for _, from := range []string{"first", "last", "company", "role", "email", "mobile", "tags", "colors", "path"} {
			if want, got := r.Fields[from], rec[from]; !reflect.DeepEqual(got, want) {
				t.Fatalf("record %v: field %s came back as %#v, want %#v", r.Fields, from, got, want)
			}
		}
	}
}

// messyRecord holds values in any spelling: case, white space, phone
// formats, unsorted and repeated list entries.
func (g gen) messyRecord(id int) connector.Record {
	pad := func(s string) string { return strings.Repeat(" ", g.r.IntN(2)) + s + strings.Repeat("\t", g.r.IntN(2)) }
	f := map[string]any{"id": fmt.Sprint(id), "first": pad("x" + g.word(mixedABC)),
		"last": pad(g.word(mixedABC)), "company": pad(g.word(mixedABC)), "role": pad(g.word(mixedABC + "  ")),
		"email":  pad("x" + g.word(lowerABC+"ABC+") + "@" + g.word("abcXYZ") + ".COM"),
		"mobile": []string{"020 7946 %04d", "+44 (0)20 7946 %04d", "+442079 46%04d"}[g.r.IntN(3)],
		"tags":   " b ;a;; " + g.word(lowerABC) + "; a",
		"colors": []string{g.word(lowerABC), " z ", g.word(lowerABC), "z"},
		"path":   []string{g.word(lowerABC), "", g.word(lowerABC)},
		"note":   int64(g.r.IntN(100)),
	}
	f["mobile"] = fmt.Sprintf(f["mobile"].(string), g.r.IntN(10000))
	return connector.Record{ID: fmt.Sprint(id), Fields: f}
}

// For any record, writing the contact's values back and mapping the
// result again changes nothing: a round trip is a fixed point after one
// step, so two-way sync cannot loop.
func TestRoundTripStable(t *testing.T) {
	m := mustCompile(t, roundTripSpec, Both)
	g := gen{rand.New(rand.NewPCG(3, 4))}
	for i := 0; i < 500; i++ {
		r := g.messyRecord(i)
		first, err := m.ToContact(r)
		if err != nil {
			t.Fatalf("record %v: %v", r.Fields, err)
		}
		rec, err := m.ToRecord(m.FromContact(contactOf(CreateBody("s", first))))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range r.Fields {
			if _, mapped := rec[k]; !mapped {
				rec[k] = v // fields not written back keep their value
			}
		}
		second, err := m.ToContact(connector.Record{ID: r.ID, Fields: rec})
		if err != nil {
			t.Fatalf("record %v written back as %v: %v", r.Fields, rec, err)
		}
		if !second.Fields.Equal(first.Fields) {
			set, removed := Diff(first.Fields, second.Fields)
			t.Fatalf("record %v: second pass changed %q, removed %v", r.Fields, set, removed)
		}
	}
}

func TestRecordChanges(t *testing.T) {
	m := mustCompile(t, roundTripSpec, Both)
	old := Fields{"firstName": "Ann", "custom.tags": "a\x1fb", "emails.work": "a@x.com", "custom.note": "1"}
	new := Fields{"firstName": "Ann", "custom.tags": "a\x1fc", "custom.note": "2"}
	got, err := m.RecordChanges(old, new)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"tags": "a;c", "email": nil}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RecordChanges = %#v, want %#v", got, want)
	}
}
