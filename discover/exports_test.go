package discover

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecogniseExports: each export is told by its signature, and none
// by a header that only shares common names with it.
func TestRecogniseExports(t *testing.T) {
	for _, e := range exports {
		t.Run(e.Name, func(t *testing.T) {
			got := recognise(append([]string{"Something else"}, e.Signature...))
			if got == nil || got.Name != e.Name {
				t.Fatalf("recognise(%q) = %v, want %s", e.Signature, got, e.Name)
			}
		})
	}
	if got := recognise([]string{"First Name", "Last Name", "Email", "Phone"}); got != nil {
		t.Fatalf("a plain header is recognised as %s", got.Name)
	}
	g := recognise([]string{"First Name", "Last Name", "Organization Name"})
	c, ok := g.column("Phone 12 - Value")
	if !ok || c.Hint != "phone" || c.LabelFrom != "Phone 12 - Label" {
		t.Fatalf("column(Phone 12 - Value) = %+v, %v; want a phone labelled by Phone 12 - Label", c, ok)
	}
}

// TestIDFieldInLanguages: customer numbers in the usual languages are
// the id, as data beside the other names.
func TestIDFieldInLanguages(t *testing.T) {
	for _, name := range []string{"Kundennummer", "Kunden-Nr.", "n° client", "N° Client", "Numéro client", "número de cliente", "Nº cliente", "numero cliente", "codice cliente", "klantnummer", "Customer No", "Client Number", "Account Number", "Número do cliente"} {
		t.Run(name, func(t *testing.T) {
			got, why := idField([]string{"Vorname", name, "E-Mail"})
			if got != name || !strings.Contains(why, "usual name") {
				t.Fatalf("idField = %q (%s), want %q", got, why, name)
			}
		})
	}
	if got, _ := idField([]string{"Telefonnummer", "Kontaktnummer", "Name"}); got != "" {
		t.Fatalf("idField took %q, a phone number", got)
	}
}

// TestCourtesyTitleIsNoRole: a Title column of Mr./Dr., or one beside a
// job title column, is left out with why; a Title of job titles is the
// role.
func TestCourtesyTitleIsNoRole(t *testing.T) {
	tests := []struct {
		name    string
		fields  []Field
		role    string
		leftOut string
	}{
		{"Mr. and Dr.", []Field{{Name: "Title", Samples: []string{"Mr.", "Dr.", "Frau Dr."}}}, "", "courtesy titles"},
		{"beside Job Title", []Field{{Name: "Title"}, {Name: "Job Title", Samples: []string{"CEO"}}}, "Job Title", "the courtesy title"},
		{"Salutation", []Field{{Name: "Salutation", Samples: []string{"Ms."}}, {Name: "Title", Samples: []string{"VP Sales"}}}, "Title", "courtesy title"},
		{"job titles", []Field{{Name: "Title", Samples: []string{"VP Sales", "Buyer"}}}, "Title", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Propose(&Source{Fields: tt.fields}, nil, "")
			role := ""
			for _, g := range p.Guesses {
				if g.Target == "role" {
					role = g.From
				}
			}
			if role != tt.role {
				t.Errorf("role <- %q, want %q", role, tt.role)
			}
			if tt.leftOut != "" && (len(p.Unmapped) == 0 || !strings.Contains(p.Unmapped[0].Why, tt.leftOut)) {
				t.Errorf("left out %+v, want a reason naming %q", p.Unmapped, tt.leftOut)
			}
		})
	}
}

// TestMultiValueCells: a cell holding several e-mails or phones gives one
// target per value, split at the exporter's separator.
func TestMultiValueCells(t *testing.T) {
	tests := []struct {
		name   string
		field  Field
		want   []string
		wantTr string
	}{
		{"Google", Field{Name: "Phone 1 - Value", Samples: []string{"+1 646-555-0142 ::: +1 917-555-0133", "+1 212-555-0199"}}, []string{"phoneNumbers.work", "phoneNumbers.work2"}, "split: ::: ,pick:2,e164"},
		{"line break", Field{Name: "email", Samples: []string{"a@example.com\nb@example.com"}}, []string{"emails.work", "emails.work2"}, "split:\n,pick:2"},
		{"semicolon", Field{Name: "mobile", Samples: []string{"0151 23456789; 0170 1234567", "0151 1111111"}}, []string{"phoneNumbers.mobile", "phoneNumbers.mobile2"}, "split:;,pick:2,e164"},
		{"one value", Field{Name: "email", Samples: []string{"a@example.com"}}, []string{"emails.work"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Propose(&Source{Fields: []Field{tt.field}}, nil, "")
			var got []string
			for _, g := range p.Guesses {
				got = append(got, g.Target)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("targets %v, want %v", got, tt.want)
			}
			if tt.wantTr != "" && strings.Join(p.Guesses[len(p.Guesses)-1].Transform, ",") != tt.wantTr {
				t.Fatalf("transform %q, want %q", p.Guesses[len(p.Guesses)-1].Transform, tt.wantTr)
			}
		})
	}
}

// TestEntityPrefix: a CRM export in another language names the record
// before the field (Pipedrive in German: "Person - Vorname").
func TestEntityPrefix(t *testing.T) {
	p := Propose(&Source{Fields: []Field{{Name: "Person - Vorname"}, {Name: "Person - Nachname"}, {Name: "Person - E-Mail-Adresse - Büro"}, {Name: "Person - Position"}}}, nil, "")
	var got []string
	for _, g := range p.Guesses {
		got = append(got, g.Target+"<-"+g.From)
	}
	want := "firstName<-Person - Vorname,lastName<-Person - Nachname,role<-Person - Position,emails.work<-Person - E-Mail-Adresse - Büro"
	if strings.Join(got, ",") != want {
		t.Fatalf("proposal %s, want %s", strings.Join(got, ","), want)
	}
}

func TestSniff(t *testing.T) {
	if enc, _ := sniffEncoding([]byte{0xFF, 0xFE, 'i', 0}); enc != "utf-16" {
		t.Errorf("UTF-16 with its mark: %q", enc)
	}
	if enc, _ := sniffEncoding([]byte("Stra\xdfe;Ort\n")); enc != "windows-1252" {
		t.Errorf("Windows-1252: %q", enc)
	}
	if enc, _ := sniffEncoding([]byte("Straße;Ort\n")); enc != "" {
		t.Errorf("UTF-8: %q", enc)
	}
	for text, want := range map[string]string{"a;b;\"c,d\"\n1,2": ";", "a\tb\tc": "tab", "a,b;c,d": "", "\"x;y\",b,c": ""} {
		if got, _ := sniffDelimiter(text); got != want {
			t.Errorf("sniffDelimiter(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestInspectCSVWithoutKey: a file with no id, e-mail or phone column is
// refused naming what to add; one with e-mails is keyed by them.
func TestInspectCSVWithoutKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := Inspect(context.Background(), Request{Type: "csv", Set: map[string]string{"path": write("names.csv", "First Name,Last Name,City\nAda,Lovelace,London\n")}})
	if err == nil || !strings.HasPrefix(err.Error(), "idColumn: ") || !strings.Contains(err.Error(), "add a column holding each row's unique id (or each row's e-mail address)") {
		t.Fatalf("err = %v, want one naming idColumn and what to add", err)
	}
	src, err := Inspect(context.Background(), Request{Type: "csv", Set: map[string]string{"path": write("people.csv", "Name,Mobile,Mail\nAda,+44 7700 900123,ada@example.com\n")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range src.Settings {
		if s.Key == "idFrom" {
			got = s.Value.([]string)
		}
	}
	if strings.Join(got, ",") != "Mail,Mobile" {
		t.Fatalf("idFrom %v, want the e-mail column, then the phone column", got)
	}
}

// TestRegionTheFileImplies: national numbers valid in several regions
// are read in the one the header's language or an address's country
// names; numbers that cannot be from there keep the region they are
// valid in.
func TestRegionTheFileImplies(t *testing.T) {
	french := []string{"01 42 68 53 00", "06 12 34 56 78", "04 78 00 00 02", "07 11 22 33 44"}
	if r, _ := GuessRegion(french); r != "ZA" {
		t.Fatalf("without a hint the numbers read as %s; the case needs numbers valid in ZA too", r)
	}
	hint, why := languageRegion([]string{"Prénom", "Nom", "Société", "Téléphone"})
	if hint != "FR" || !strings.Contains(why, "French") {
		t.Fatalf("languageRegion = %s (%s), want FR", hint, why)
	}
	if r, why := guessRegion(french, hint, why, false); r != "FR" {
		t.Fatalf("region %s (%s), want FR from the header's language", r, why)
	}
	if r, _ := guessRegion([]string{"(415) 555-0100", "212 555 0199"}, "FR", "the header is in French", false); r != "US" {
		t.Fatalf("region %s, want US: the numbers are no French numbers", r)
	}
	c, why := countryRegion([]string{"Name", "Business Country/Region"}, [][]string{{"Ada", "United Kingdom"}, {"Mary", "United Kingdom"}, {"Bob", ""}})
	if c != "GB" || !strings.Contains(why, "2 of 2") {
		t.Fatalf("countryRegion = %s (%s), want GB", c, why)
	}
	// Ofcom's drama numbers are possible, not valid, in GB: the country
	// column settles it.
	if r, why := guessRegion([]string{"07700 900123", "07700 900456", "020 7946 0018"}, "GB", "an address names it", true); r != "GB" {
		t.Fatalf("region %s (%s), want GB", r, why)
	}
}

func TestLabelFromColumn(t *testing.T) {
	tests := []struct {
		samples []string
		want    string
	}{
		{[]string{"* Home", "Home", "Work"}, "home"},
		{[]string{"Mobile", "Mobil", "Handy"}, "mobile"},
		{[]string{"Geschäftlich"}, "work"},
		{[]string{"Assistant"}, "other"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got, _ := labelFromColumn(Field{Name: "Phone 1 - Label", Samples: tt.samples}, "Phone 1 - Value"); got != tt.want {
			t.Errorf("labelFromColumn(%q) = %q, want %q", tt.samples, got, tt.want)
		}
	}
}
