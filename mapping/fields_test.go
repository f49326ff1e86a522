package mapping

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

func ptr(s string) *string { return &s }

func TestHashIgnoresEmptyAndOrder(t *testing.T) {
	a := Fields{"firstName": "Ann", "emails.work": "a@x.com", "lastName": ""}
	b := Fields{"emails.work": "a@x.com", "firstName": "Ann"}
	if a.Hash() != b.Hash() {
		t.Fatal("an empty value hashed differently from a missing one")
	}
	for name, c := range map[string]Fields{
		"changed value":  {"firstName": "Anne", "emails.work": "a@x.com"},
		"moved value":    {"firstName": "Ann", "emails.home": "a@x.com"},
		"key/value glue": {"firstName": "Ann", "emails.wor": "ka@x.com"},
	} {
		if c.Hash() == a.Hash() {
			t.Errorf("%s: same hash", name)
		}
	}
}

// Two contacts holding the same data in other orders and spellings read
// to equal Fields and hashes.
func TestFromContactCanonical(t *testing.T) {
	m := mustCompile(t, crmSpec, Both)
	c1 := workspace.Contact{
		DefaultFields: workspace.DefaultFields{
			FirstName: ptr("Ann"), LastName: ptr("Lee"), Company: nil,
			Emails:       []workspace.Item{{ID: "e1", Name: "home", Value: "h@x.com"}, {ID: "e2", Name: "work", Value: "ann@x.com"}},
			PhoneNumbers: []workspace.Item{{ID: "p1", Name: "mobile", Value: "+14155550100"}},
		},
		CustomFields: []workspace.CustomField{{Key: "tags", Value: workspace.ListValue([]string{"vip", "b2b"})}, {Key: "lifecycle", Value: workspace.ListValue([]string{"lead"})}},
	}
	c2 := workspace.Contact{
		DefaultFields: workspace.DefaultFields{
			FirstName: ptr("  Ann "), LastName: ptr("Lee\t"), Company: ptr(" "),
			Emails:       []workspace.Item{{ID: "e2", Name: "work", Value: " Ann@X.com "}, {ID: "e1", Name: "home", Value: "other@x.com"}},
			PhoneNumbers: []workspace.Item{{ID: "p1", Name: "mobile", Value: "(415) 555-0100"}},
		},
		CustomFields: []workspace.CustomField{{Key: "lifecycle", Value: workspace.ListValue([]string{" lead"})}, {Key: "tags", Value: workspace.ListValue([]string{"b2b", "vip", "vip"})}},
	}
	f1, f2 := m.FromContact(c1), m.FromContact(c2)
	want := Fields{"firstName": "Ann", "lastName": "Lee", "emails.work": "ann@x.com", "phoneNumbers.mobile": "+14155550100",
		"custom.tags": "b2b\x1fvip", "custom.lifecycle": "lead"}
	if !reflect.DeepEqual(f1, want) || !reflect.DeepEqual(f2, want) {
		t.Fatalf("FromContact:\n%q\n%q\nwant %q", f1, f2, want)
	}
	if f1.Hash() != f2.Hash() {
		t.Fatal("hashes differ")
	}
	// A value the workspace holds that is not a valid phone is kept.
	c2.DefaultFields.PhoneNumbers[0].Value = " 12 "
	if got := m.FromContact(c2)["phoneNumbers.mobile"]; got != "12" {
		t.Fatalf("invalid phone read as %q, want it kept trimmed", got)
	}
}

func TestDiff(t *testing.T) {
	old := Fields{"firstName": "Ann", "lastName": "Lee", "emails.work": "a@x.com", "role": ""}
	new := Fields{"firstName": "Ann", "lastName": "Li", "phoneNumbers.m": "+14155550100", "emails.work": ""}
	set, removed := Diff(old, new)
	if want := (Fields{"lastName": "Li", "phoneNumbers.m": "+14155550100"}); !reflect.DeepEqual(set, want) {
		t.Errorf("set = %v, want %v", set, want)
	}
	if want := []string{"emails.work"}; !reflect.DeepEqual(removed, want) {
		t.Errorf("removed = %v, want %v", removed, want)
	}
	if !old.Equal(Fields{"firstName": "Ann", "lastName": "Lee", "emails.work": "a@x.com"}) || old.Equal(new) {
		t.Error("Equal disagrees with Diff")
	}
}

func TestCreateBody(t *testing.T) {
	m := Mapped{ExternalID: "42", SourceURL: "https://crm/42", Fields: Fields{
		"firstName": "Ann", "company": "Acme", "emails.work": "a@x.com", "emails.home": "h@x.com",
		"phoneNumbers.mobile": "+14155550100", "custom.tags": "b2b\x1fvip", "lastName": "",
	}}
	got, _ := json.Marshal(CreateBody("custom-crm", m))
	want := `{"defaultFields":{"company":"Acme","firstName":"Ann","emails":[{"name":"home","value":"h@x.com"},{"name":"work","value":"a@x.com"}],` +
		`"phoneNumbers":[{"name":"mobile","value":"+14155550100"}]},"customFields":[{"key":"tags","value":["b2b","vip"]}],` +
		`"source":"custom-crm","sourceUrl":"https://crm/42","externalId":"42"}`
	if string(got) != want {
		t.Fatalf("CreateBody =\n%s\nwant\n%s", got, want)
	}
}

func TestPatchBody(t *testing.T) {
	old := Fields{"firstName": "Ann", "lastName": "Lee", "role": "CEO", "emails.work": "a@x.com", "emails.home": "h@x.com",
		"phoneNumbers.mobile": "+14155550100", "custom.tags": "vip", "custom.stage": "lead"}
	new := Fields{"firstName": "Ann", "lastName": "Li", "emails.work": "ann@x.com", "phoneNumbers.mobile": "+14155550100",
		"phoneNumbers.office": "+14155550199", "custom.tags": "b2b\x1fvip", "company": "Acme"}
	ids := map[string]string{"emails.work": "E1", "emails.home": "E2"}
	got, _ := json.Marshal(PatchBody(old, new, ids))
	want := `{"defaultFields":{"company":"Acme","lastName":"Li","role":null,` +
		`"emails":[{"id":"E2","name":"home","value":null},{"id":"E1","name":"work","value":"ann@x.com"}],` +
		`"phoneNumbers":[{"name":"office","value":"+14155550199"}]},` +
		`"customFields":[{"key":"stage","value":null},{"key":"tags","value":["b2b","vip"]}]}` // the client sends each in its form

	if string(got) != want {
		t.Fatalf("PatchBody =\n%s\nwant\n%s", got, want)
	}
	if p := PatchBody(old, old, nil); !p.IsEmpty() {
		t.Fatalf("patch of equal fields is not empty: %+v", p)
	}
	got, _ = json.Marshal(PatchBody(Fields{"emails.work": "a@x.com"}, Fields{}, nil))
	if want := `{"defaultFields":{"emails":[{"name":"work","value":null}]}}`; string(got) != want {
		t.Fatalf("removal without id = %s, want %s", got, want)
	}
}

func TestItemIDs(t *testing.T) {
	c := workspace.Contact{DefaultFields: workspace.DefaultFields{
		Emails:       []workspace.Item{{ID: "E1", Name: "work"}, {ID: "E9", Name: "work"}, {ID: "E2", Name: "home"}},
		PhoneNumbers: []workspace.Item{{ID: "P1", Name: "mobile"}},
	}}
	want := map[string]string{"emails.work": "E1", "emails.home": "E2", "phoneNumbers.mobile": "P1"}
	if got := ItemIDs(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("ItemIDs = %v, want %v", got, want)
	}
}

// Records holding the same data in other spellings and orders map to the
// same Fields and hash.
func TestToContactHashStable(t *testing.T) {
	m := mustCompile(t, crmSpec, Both)
	a := connector.Record{ID: "1", Fields: map[string]any{"id": "1", "first_name": "Ann", "last_name": "Lee",
		"email": "ann@x.com", "mobile": "+14155550100", "tags": "b2b;vip", "stage": "lead"}}
	b := connector.Record{ID: "1", Fields: map[string]any{"stage": " lead ", "tags": " vip ; b2b;vip;", "mobile": "(415) 555-0100",
		"email": " ANN@X.COM", "last_name": "Lee\t", "first_name": "  Ann", "id": int64(1), "company": ""}}
	ma, err := m.ToContact(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := m.ToContact(b)
	if err != nil {
		t.Fatal(err)
	}
	if ma.Fields.Hash() != mb.Fields.Hash() || ma.ExternalID != mb.ExternalID {
		t.Fatalf("equal records map differently:\n%q\n%q", ma.Fields, mb.Fields)
	}
}

// TestHashFormatUnchanged: stored links hold hashes of this exact form;
// a change would make every record look changed once.
func TestHashFormatUnchanged(t *testing.T) {
	reference := func(f Fields) string {
		h := sha256.New()
		h.Write([]byte("syncd-fields-v1\n"))
		for _, k := range f.keys() {
			fmt.Fprintf(h, "%d:%s%d:%s\n", len(k), k, len(f[k]), f[k])
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	many := Fields{}
	for i := range 40 {
		many[fmt.Sprintf("custom.k%02d", i)] = strings.Repeat("v", i)
	}
	for _, f := range []Fields{nil, {}, {"firstName": "Ada", "lastName": "", "emails.work": "a@b.c"}, many,
		{"custom.tags": "a\x1fb", "phoneNumbers.mobile": "+14155550100", "sourceUrl": "https://x.example/1"}} {
		if got, want := f.Hash(), reference(f); got != want {
			t.Errorf("Hash(%v) = %s, want %s", f, got, want)
		}
	}
}
