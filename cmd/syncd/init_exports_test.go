package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	csvconn "github.com/syncd-io/syncd/connector/csv"
	"github.com/syncd-io/syncd/workspace"
)

// exportFixture is a contact export as a program writes it
// (testdata/init, whose README names where each header comes from), what
// init must write for it, and the contact each row must become.
type exportFixture struct {
	file string
	// encoding, delimiter and crlf are how the file is written, for the
	// second pass's rewrite.
	encoding  string
	delimiter rune
	crlf      bool
	// wantLines are lines the written configuration must hold.
	wantLines []string
	// want is each row's contact by externalId:
	// first|last|company|role|emails|phones|notes|labels.
	want map[string]string
}

var exportFixtures = []exportFixture{
	{
		file: "google_contacts.csv", delimiter: ',',
		wantLines: []string{
			"Recognised export: Google Contacts (Google CSV).",
			"idFrom: [E-mail 1 - Value, E-mail 2 - Value, Phone 1 - Value, Phone 2 - Value] # no id column: a row's id is its first e-mail, else its first phone",
			"A person whose e-mail (or, without one, phone number)\n",
			"role: Organization Title", "company: Organization Name",
			"emails.home: {from: E-mail 1 - Value, transform: ['split: ::: ', 'pick:1']}",
			"phoneNumbers.mobile2: {from: Phone 1 - Value, transform: ['split: ::: ', 'pick:2', e164], region: US}",
			"Name Prefix: the courtesy title (Mr., Dr.), not the job title",
			`Phone 1 - Label: each row's label of "Phone 1 - Value"`,
		},
		want: map[string]string{
			"ada@example.com":    "Ada|Lovelace|Analytical Engines|Programmer|home=ada@example.com,home2=ada@work.example|mobile=+16465550142,mobile2=+19175550133,work=+12125550100|likes tea|* myContacts ::: VIP",
			"grace@example.net":  "Grace|Hopper|US Navy|Rear Admiral|home=grace@example.net|mobile=+12125550199||* myContacts",
			"+14155550123":       "Alan|Turing|Bletchley Park|Cryptanalyst||mobile=+14155550123||* myContacts",
			"edsger@example.org": "Edsger|Dijkstra|UT Austin|Professor|home=edsger@example.org|mobile=+15125550147||* myContacts",
		},
	},
	{
		file: "google_contacts_legacy.csv", delimiter: ',',
		wantLines: []string{"Google Contacts (older Google CSV)", "role: Organization 1 - Title", "Phone region GB"},
		want: map[string]string{
			"ada@engines.example":     "Ada|Lovelace|Analytical Engines|Programmer|work=ada@engines.example|mobile=+447700900123,work=+442079460018||* myContacts ::: Friends",
			"charles@engines.example": "Charles|Babbage|Analytical Engines|Inventor|work=charles@engines.example|mobile=+447700900456||* myContacts",
			"mary@example.org":        "Mary|Somerville|Royal Society|Science writer|work=mary@example.org|mobile=+447700900789||* myContacts",
		},
	},
	{
		file: "outlook.csv", delimiter: ',', crlf: true,
		wantLines: []string{"Outlook (CSV)", "role: Job Title", "Title: the courtesy title (Mr., Dr.), not the job title", "Phone region GB"},
		want: map[string]string{
			"ada@engines.example":     "Ada|Lovelace|Analytical Engines|Programmer|work=ada@engines.example|mobile=+447700900123,work=+442079460018||VIP",
			"charles@engines.example": "Charles|Babbage|Analytical Engines|Inventor|work=charles@engines.example|work=+442079460019||",
			"mary@example.org":        "Mary|Somerville|Royal Society|Science writer|home=mary.s@example.net,work=mary@example.org|mobile=+447700900789||",
			"02079460123":             "Michael|Faraday|Royal Institution|Chemist||home=+442079460123||",
		},
	},
	{
		file: "hubspot_bom_quoted.csv", delimiter: ',', crlf: true,
		wantLines: []string{"HubSpot (contacts export)", "idColumn: Record ID # the HubSpot record id", "role: Job Title", "Salutation: the courtesy title"},
		want: map[string]string{
			"51":  "Maria|Johnson|HubSpot Example|Head of Sales|work=maria@hubspot-example.com|work=+14155550100||",
			"101": "Brian|Halligan|HubSpot Example|CEO|work=bh@hubspot-example.com|mobile=+16175550144||",
			"151": "Dana|Lee|Lee & Co|Buyer|work=dana@example.org|mobile=+16465550111,work=+12125550177||",
		},
	},
	{
		file: "salesforce_dataloader.csv", delimiter: ',',
		wantLines: []string{"idColumn: Id # the Salesforce record id", "role: Title", "Phone region FR"},
		want: map[string]string{
			"0035e00000AbCdEAAV": "Élise|Martin|Acme France|VP Sales|work=elise.martin@acme.example|mobile=+33612345678,work=+33142685300|met at VivaTech|",
			"0035e00000AbCdFAAV": "Louis|Bernard|Acme France|Buyer|work=louis.bernard@acme.example|work=+33142685301||",
			"0035e00000AbCdGAAV": "Camille|Petit|Petit SAS|CTO||home=+33472000001,mobile=+33798765432||",
		},
	},
	{
		file: "salesforce_report.csv", delimiter: ',', crlf: true,
		wantLines: []string{"Salesforce (report export)", "idColumn: Contact ID # the Salesforce record id", "role: Title", "Salutation: the courtesy title", "Phone region US"},
		want: map[string]string{
			"0038c00002XyZaAAB": "Ravi|Kumar|Globex|Procurement Lead|work=ravi.kumar@globex.example|mobile=+17735550199,work=+13125550142||",
			"0038c00002XyZbAAB": "Emily|Chen|Initech|CFO|work=emily.chen@initech.example|work=+15125550110||",
			"0038c00002XyZcAAB": "Omar|Haddad|Umbrella Labs|Head of Research||mobile=+16175550123||",
		},
	},
	{
		file: "pipedrive_people.csv", delimiter: ',',
		wantLines: []string{"idColumn: Person - ID # the Pipedrive record id", "Phone region ES"},
		want: map[string]string{
			"1": "Ana|Ruiz|Empresa Ejemplo|Directora|work=ana@empresa.example,work2=ana.ruiz@empresa.example|mobile=+34612345678,work=+34912345678||Hot lead",
			"2": "Luis|García|Empresa Ejemplo|Comprador|work=luis@empresa.example|mobile=+34622111222||",
			"3": "Carmen|López|Otra SL||home=carmen@example.es|work=+34915555000||",
		},
	},
	{
		file: "zoho_contacts.csv", delimiter: ',',
		wantLines: []string{"idColumn: Record Id # the Zoho CRM record id", "role: Title", "Phone region IT"},
		want: map[string]string{
			"zcrm_4876876000000318001": "Marco|Rossi|Rossi SpA|Direttore|work=marco@rossi.example|mobile=+393471234567,work=+390612345678|prefers calls|",
			"zcrm_4876876000000318002": "Laura|Bianchi|Bianchi Srl|Acquisti|other=laura.b@example.it,work=laura@bianchi.example|mobile=+393387654321||",
			"zcrm_4876876000000318003": "Paolo|Verdi|Verdi & Figli|Titolare||work=+390287654321||",
		},
	},
	{
		file: "excel_german_windows1252.csv", encoding: "windows-1252", delimiter: ';', crlf: true,
		wantLines: []string{"encoding: windows-1252", `delimiter: ;`, `idColumn: Kundennummer # "Kundennummer" is a usual name for a customer number`,
			"role: Position", "Anrede: \"Anrede\" is the courtesy title", "Phone region DE"},
		want: map[string]string{
			"10001": "Jürgen|Müller|Müller & Söhne GmbH|Geschäftsführer|work=j.mueller@example.de|mobile=+4915123456789,work=+4930901820||",
			"10002": "Zoë|Weiß|Weiß Café|Inhaberin|work=zoe@weiss.example|work=+498912345678||",
			"10003": "Käthe|Groß|Groß AG|Einkauf €||mobile=+491701234567||",
		},
	},
	{
		file: "excel_unicode_text_french.txt", encoding: "utf-16", delimiter: '\t', crlf: true,
		wantLines: []string{"encoding: utf-16", "delimiter: tab", `idColumn: N° client # "N° client" is a usual name for a customer number`,
			"firstName: Prénom", "lastName: Nom", "company: Société", "role: Fonction", "emails.work: Courriel", "Phone region FR"},
		want: map[string]string{
			"C-001": "Élodie|Durand|Étoile SARL|Directrice commerciale|work=elodie.durand@example.fr|mobile=+33612345678,work=+33142685300||",
			"C-002": "François|Lefèvre|Lefèvre & Fils|Gérant|work=f.lefevre@example.fr|mobile=+33711223344||",
			"C-003": "Chloé|Moreau|Moreau SA|Acheteuse||work=+33478000002||",
		},
	},
	{
		file: "numbers_spanish_semicolon.csv", delimiter: ';',
		wantLines: []string{`idColumn: Número de cliente # "Número de cliente" is a usual name for a customer number`, "lastName: Apellidos", "role: Cargo",
			"emails.work: Correo electrónico", "phoneNumbers.mobile: {from: Móvil", "Phone region ES"},
		want: map[string]string{
			"ES-101": "Lucía|Fernández Gil|Ñandú S.L.|Gerente|work=lucia@nandu.example|mobile=+34612345678,work=+34912345678||",
			"ES-102": "Javier|Ortiz|Ñandú S.L.|Compras|work=javier@nandu.example|mobile=+34622111333||",
			"ES-103": "Nuria|Sanz|Sanz y Asociados|Socia||work=+34933000111||",
		},
	},
	{
		file: "excel_dutch_bom_semicolon.csv", delimiter: ';', crlf: true,
		wantLines: []string{`idColumn: Klantnummer # "Klantnummer" is a usual name for a customer number`, "role: Functie", "emails.work: E-mailadres",
			"Aanhef: \"Aanhef\" is the courtesy title", "Phone region NL"},
		want: map[string]string{
			"K-9001": "Daan|de Vries|Tulp BV|Directeur|work=daan@tulp.example|mobile=+31612345678,work=+31201234567||",
			"K-9002": "Sanne|Jansen|Tulp BV|Inkoop|work=sanne@tulp.example|mobile=+31687654321||",
			"K-9003": "Bram|Bakker|Bakker & Zn|Eigenaar||work=+31107654321||",
		},
	},
	{
		file: "vcard_derived.csv", delimiter: ',',
		wantLines: []string{"vCard-derived CSV", "role: TITLE", `split:\n`},
		want: map[string]string{
			"woz@apple.example":    "Steve|Wozniak|Apple Example|Engineer|work=woz@apple.example|mobile=+14085550101,mobile2=+14085550102,work=+14085550199|met at the club|",
			"joanna@apple.example": "Joanna|Hoffman|Apple Example|Marketing|work=joanna@apple.example|mobile=+14085550111||",
			"+14085550122":         "Bill|Atkinson|Apple Example|Engineer||mobile=+14085550122||",
		},
	},
}

// TestInitExportsToContacts is a new user's first day with the contact
// files people have: for each export (Google Contacts, Outlook, HubSpot,
// Salesforce, Pipedrive, Zoho, vCard-derived, Excel in German and French,
// Windows-1252 and UTF-16), init writes a file that validates and syncs
// every row to the right contact without being edited; a second pass on
// the file exported again, its rows reordered and one removed, creates no
// duplicate and changes no contact (onSourceDelete is ignore: the removed
// row's contact stays as it was).
func TestInitExportsToContacts(t *testing.T) {
	for _, fx := range exportFixtures {
		t.Run(strings.TrimSuffix(fx.file, filepath.Ext(fx.file)), func(t *testing.T) {
			e := newInitEnv(t,
				workspace.CustomFieldDefinition{Name: "Notes", Key: "notes", Type: workspace.FieldString},
				workspace.CustomFieldDefinition{Name: "Labels", Key: "labels", Type: workspace.FieldString})
			data, err := os.ReadFile(filepath.Join("testdata", "init", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(e.dir, fx.file)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(e.dir, "syncd.yaml")
			out := e.must(nil, "init", "--type", "csv", "--set", "path="+path, "--base-url", e.emu.URL, "--out", cfg)
			written, _ := os.ReadFile(cfg)
			t.Logf("init wrote:\n%s\nand said:\n%s", written, out)
			for _, w := range fx.wantLines {
				if !strings.Contains(string(written), w) {
					t.Errorf("the file lacks %q", w)
				}
			}
			checkLeftOut(t, out, string(written))
			e.exportsFrom(out)
			e.must(nil, "validate", "--config", cfg)
			e.must(nil, "run", "--once", "--config", cfg)
			first := e.emu.Contacts()
			checkContacts(t, first, fx.want)

			rewriteExport(t, path, fx)
			e.must(nil, "run", "--once", "--config", cfg)
			second := e.emu.Contacts()
			checkContacts(t, second, fx.want) // no duplicate, the removed row's contact kept
			if !reflect.DeepEqual(byExternalID(second), byExternalID(first)) {
				t.Errorf("the second pass changed contacts:\nbefore %+v\nafter  %+v", byExternalID(first), byExternalID(second))
			}
			if again, _ := os.ReadFile(cfg); !bytes.Equal(again, written) {
				t.Error("the configuration changed after init")
			}
		})
	}
}

// checkLeftOut: init's output names every column left out, one line
// each, as the file does, and never the row id.
func checkLeftOut(t *testing.T, out, file string) {
	t.Helper()
	_, left, _ := strings.Cut(out, "Left out:\n")
	left, _, _ = strings.Cut(left, "\n\n")
	for _, line := range strings.Split(strings.TrimSpace(left), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.Contains(file, "#   "+line) {
			t.Errorf("init said %q left out, the file does not", line)
		}
		if strings.Contains(line, "row id") {
			t.Errorf("the row id is listed as left out: %q", line)
		}
	}
}

// contactRow is a contact as the fixtures' want: items sorted.
func contactRow(c workspace.Contact) string {
	d := c.DefaultFields
	sorted := func(its []workspace.Item) string {
		its = append([]workspace.Item(nil), its...)
		sort.Slice(its, func(i, j int) bool {
			if its[i].Name != its[j].Name {
				return its[i].Name < its[j].Name
			}
			return its[i].Value < its[j].Value
		})
		var s []string
		for _, it := range its {
			s = append(s, it.Name+"="+it.Value)
		}
		return strings.Join(s, ",")
	}
	return strings.Join([]string{str(d.FirstName), str(d.LastName), str(d.Company), str(d.Role),
		sorted(d.Emails), sorted(d.PhoneNumbers), customValue(c, "notes"), customValue(c, "labels")}, "|")
}

func checkContacts(t *testing.T, got []workspace.Contact, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d contacts, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for _, c := range got {
		id := str(c.ExternalID)
		if seen[id] {
			t.Errorf("two contacts have externalId %q", id)
		}
		seen[id] = true
		w, ok := want[id]
		if !ok {
			t.Errorf("unexpected contact %q: %s", id, contactRow(c))
			continue
		}
		if row := contactRow(c); row != w {
			t.Errorf("contact %q:\n got %s\nwant %s", id, row, w)
		}
	}
}

func byExternalID(cs []workspace.Contact) map[string]workspace.Contact {
	out := map[string]workspace.Contact{}
	for _, c := range cs {
		out[str(c.ExternalID)] = c
	}
	return out
}

// rewriteExport writes the file again as its program would export it
// with the rows in reverse order and the second row gone, in the same
// encoding and delimiter, and renames it into place.
func rewriteExport(t *testing.T, path string, fx exportFixture) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := csvconn.Text(bytes.NewReader(raw), fx.encoding)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(text)
	if err != nil {
		t.Fatal(err)
	}
	bom := bytes.HasPrefix(b, []byte("\uFEFF")) || bytes.HasPrefix(raw, []byte{0xFF, 0xFE})
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\uFEFF"))))
	r.Comma = fx.delimiter
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 4 {
		t.Fatalf("%s: %d rows, want a header and 3 at least", fx.file, len(rows))
	}
	kept := [][]string{rows[0]}
	for i := len(rows) - 1; i >= 1; i-- {
		if i != 2 {
			kept = append(kept, rows[i])
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma, w.UseCRLF = fx.delimiter, fx.crlf
	if err := w.WriteAll(kept); err != nil {
		t.Fatal(err)
	}
	var enc encoding.Encoding = encoding.Nop
	switch fx.encoding {
	case "windows-1252":
		enc = charmap.Windows1252
	case "utf-16":
		enc = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	}
	body, err := enc.NewEncoder().Bytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if bom {
		prefix := []byte("\uFEFF")
		if fx.encoding == "utf-16" {
			prefix = []byte{0xFF, 0xFE}
		}
		body = append(prefix, body...)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(fmt.Errorf("rename: %w", err))
	}
}

// TestInitExportWithARepeatedEmail: two rows of an address book without
// ids share an e-mail address, so one id: the other rows sync, and the
// second of the two is reported on its line, not the whole file.
func TestInitExportWithARepeatedEmail(t *testing.T) {
	e := newInitEnv(t)
	path := filepath.Join(e.dir, "contacts.csv")
	text := "First Name,Last Name,E-mail 1 - Value,Phone 1 - Value\n" +
		"Ada,Lovelace,ada@example.com,+1 646-555-0142\n" +
		"Grace,Hopper,grace@example.net,\n" +
		"Augusta,King,ADA@example.com,+1 917-555-0133\n" +
		"Alan,Turing,,+1 415-555-0123\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.dir, "syncd.yaml")
	out := e.must(nil, "init", "--type", "csv", "--set", "path="+path, "--base-url", e.emu.URL, "--out", cfg)
	e.exportsFrom(out)
	e.must(nil, "validate", "--config", cfg)
	runOut, runErr, err := e.run(nil, "run", "--once", "--config", cfg)
	t.Logf("run --once: %v\n%s%s", err, runOut, runErr)
	checkContacts(t, e.emu.Contacts(), map[string]string{
		"ada@example.com":   "Ada|Lovelace|||work=ada@example.com|work=+16465550142||",
		"grace@example.net": "Grace|Hopper|||work=grace@example.net|||",
		"+14155550123":      "Alan|Turing||||work=+14155550123||",
	})
	letters := e.must(nil, "deadletters", "list", "--config", cfg)
	if !strings.Contains(letters, "line 4") || !strings.Contains(letters, `its id "ada@example.com" (from column "E-mail 1 - Value") is the id of line 2 already`) {
		t.Fatalf("dead letters do not name line 4 and why:\n%s", letters)
	}
}

// TestValidateNamesCSVKeyProblems: what run would refuse of a CSV file's
// key, validate names first: an idColumn written with its quotes or a
// byte order mark, one the header does not have (naming the header's
// near name), an idFrom column the header lacks.
func TestValidateNamesCSVKeyProblems(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "hubspot.csv")
	if err := os.WriteFile(csvPath, []byte("\uFEFF\"Record ID\",\"First Name\",\"Email\"\r\n\"51\",\"Maria\",\"maria@example.com\"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(csvPath, key string) string {
		return `workspace:
  baseURL: http://127.0.0.1:1
  apiKey: k
connectors:
  - name: crm
    type: csv
    settings:
      path: ` + csvPath + `
      ` + key + `
    mapping:
      fields:
        firstName: First Name
`
	}
	tests := []struct{ name, key, want string }{
		{"quoted", `idColumn: '"Record ID"'`, `idColumn: "\"Record ID\"" is quoted as in the file's text; the column's name is "Record ID"`},
		{"byte order mark", `idColumn: "\ufeffRecord ID"`, `idColumn: "\ufeffRecord ID" starts with a byte order mark`},
		{"other case", `idColumn: record id`, `no id column "record id" in header (the header has "Record ID": write idColumn: "Record ID")`},
		{"idFrom column missing", `idFrom: [E-mail]`, `no column "E-mail" (idFrom) in header`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantInvalid(t, config(csvPath, tt.key), 1, tt.want)
		})
	}
	// A file Excel saved in another encoding than the one set. (A
	// Windows-1252 header of ASCII names reads; its rows' letters are
	// dead letters naming the encoding setting.)
	for _, tt := range []struct{ name, file, key, want string }{
		{"Unicode Text read as UTF-8", "excel_unicode_text_french.txt", "idColumn: C", "set encoding: utf-16"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			abs, err := filepath.Abs(filepath.Join("testdata", "init", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			wantInvalid(t, config(abs, tt.key), 1, tt.want)
		})
	}
}
