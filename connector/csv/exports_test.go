package csv_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/csv"
)

// TestReadSpreadsheetExports: files as spreadsheet programs and address
// books save them (another encoding, a byte order mark, trailing empty
// columns, no id column) read to the records their text holds.
func TestReadSpreadsheetExports(t *testing.T) {
	tests := []struct {
		name, file string
		mod        func(*csv.Settings)
		want       []connector.Record
		wantBad    map[string]string // Invalid error by record ID
		wantErr    string
	}{
		{
			name: "Windows-1252 with semicolons and CRLF", file: "windows1252_semicolon_crlf.csv",
			mod: func(s *csv.Settings) { s.Encoding = "windows-1252"; s.Delimiter = ";"; s.IDColumn = "Kundennummer" },
			want: []connector.Record{
				{ID: "K-1", Fields: map[string]any{"Kundennummer": "K-1", "Vorname": "Jürgen", "Nachname": "Müller", "Straße": "Hauptstraße 5"}},
				{ID: "K-2", Fields: map[string]any{"Kundennummer": "K-2", "Vorname": "Zoë", "Nachname": "Loß", "Straße": "Größe €"}},
			},
		},
		{
			name: "Windows-1252 read as UTF-8 names the setting", file: "windows1252_semicolon_crlf.csv",
			mod:     func(s *csv.Settings) { s.Delimiter = ";"; s.IDColumn = "Kundennummer" },
			wantErr: "line 1: header column 4 is not valid UTF-8 (a file saved by Excel on Windows is often windows-1252: set encoding)",
		},
		{
			name: "UTF-16 little-endian with its byte order mark, tabs", file: "utf16le_bom_tab.txt",
			mod: func(s *csv.Settings) { s.Encoding = "utf-16"; s.Delimiter = "tab" },
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Renée", "email": "renee@example.com"}},
				{ID: "2", Fields: map[string]any{"id": "2", "name": "Zoë\tQuinn", "email": "zoe@example.com"}},
			},
		},
		{
			name: "UTF-16 big-endian told by its byte order mark", file: "utf16be_bom.csv",
			mod:  func(s *csv.Settings) { s.Encoding = "utf-16" },
			want: []connector.Record{{ID: "1", Fields: map[string]any{"id": "1", "name": "Ågot"}}},
		},
		{
			name: "UTF-16 read as UTF-8 names the setting", file: "utf16le_bom_tab.txt",
			mod:     func(s *csv.Settings) { s.Delimiter = "tab" },
			wantErr: "the file is UTF-16 (it starts with a UTF-16 byte order mark), as Excel's \"Unicode Text\" writes it: set encoding: utf-16",
		},
		{
			name: "a broken quote in UTF-16 costs its line", file: "utf16le_unterminated_quote.txt",
			mod: func(s *csv.Settings) { s.Encoding = "utf-16"; s.Delimiter = "tab" },
			want: []connector.Record{
				{ID: "line 2"},
				{ID: "2", Fields: map[string]any{"id": "2", "name": "Grace"}},
			},
			wantBad: map[string]string{"line 2": "it would take in line 3"},
		},
		{
			name: "trailing empty columns are left out", file: "trailing_empty_columns.csv",
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada"}},
				{ID: "2", Fields: map[string]any{"id": "2", "name": "Grace"}},
			},
		},
		{
			name: "rows a spreadsheet left empty are no records", file: "trailing_empty_rows.csv",
			mod: func(s *csv.Settings) { s.Delimiter = ";" },
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada"}},
				{ID: "2", Fields: map[string]any{"id": "2", "name": "Grace"}},
			},
		},
		{
			name: "ids from the first e-mail, else the first phone", file: "no_id_column_emails.csv",
			mod: func(s *csv.Settings) { s.IDFrom = []string{"E-mail 1 - Value", "Phone 1 - Value"} },
			want: []connector.Record{
				{ID: "ada@example.com", Fields: map[string]any{"First Name": "Ada", "E-mail 1 - Value": "Ada@Example.com ::: ada@work.example", "Phone 1 - Value": ""}},
				{ID: "+16465550142", Fields: map[string]any{"First Name": "Grace", "E-mail 1 - Value": "", "Phone 1 - Value": "+1 (646) 555-0142 ::: +1 917-555-0133"}},
				{ID: "line 4"},
			},
			wantBad: map[string]string{"line 4": "no id: the columns the id is derived from (idFrom: E-mail 1 - Value, Phone 1 - Value) are all empty on this row"},
		},
		{
			name: "a repeated derived id is its line's problem", file: "no_id_column_repeated_email.csv",
			mod: func(s *csv.Settings) { s.IDFrom = []string{"Email"} },
			want: []connector.Record{
				{ID: "ada@example.com", Fields: map[string]any{"Name": "Ada", "Email": "ada@example.com"}},
				{ID: "grace@example.com", Fields: map[string]any{"Name": "Grace", "Email": "grace@example.com"}},
				{ID: "line 4"},
				{ID: "alan@example.com", Fields: map[string]any{"Name": "Alan", "Email": "alan@example.com"}},
			},
			wantBad: map[string]string{"line 4": `its id "ada@example.com" (from column "Email") is the id of line 2 already`},
		},
		{
			name: "an idFrom column missing from the header", file: "no_id_column_repeated_email.csv",
			mod:     func(s *csv.Settings) { s.IDFrom = []string{"E-mail"} },
			wantErr: `line 1: no column "E-mail" (idFrom) in header`,
		},
		{
			name: "an id column named with other case and quotes", file: "no_id_column_repeated_email.csv",
			mod:     func(s *csv.Settings) { s.IDColumn = "EMAIL" },
			wantErr: `no id column "EMAIL" in header (the header has "Email": write idColumn: "Email")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mods := []func(*csv.Settings){}
			if tt.mod != nil {
				mods = append(mods, tt.mod)
			}
			src := open(t, settingsFor(filepath.Join("testdata", tt.file), mods...))
			defer src.Close()
			got, err := readAll(context.Background(), src.Snapshot)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("read = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range got {
				if r.Invalid == nil {
					continue
				}
				if w, ok := tt.wantBad[r.ID]; !ok || !strings.Contains(r.Invalid.Error(), w) {
					t.Errorf("record %s invalid: %v, want %q", r.ID, r.Invalid, w)
				}
				got[i].Invalid = nil
				// The fields of an invalid record are its id at most.
				got[i].Fields = nil
			}
			for i := range tt.want {
				if _, bad := tt.wantBad[tt.want[i].ID]; bad {
					tt.want[i].Fields = nil
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// TestFieldsOfAUTF16FileReadAsUTF8: validate's read of the header names
// the encoding to set, as a problem of the settings.
func TestFieldsOfAUTF16FileReadAsUTF8(t *testing.T) {
	src := open(t, settingsFor(filepath.Join("testdata", "utf16le_bom_tab.txt"), func(s *csv.Settings) { s.Delimiter = "tab" }))
	defer src.Close()
	_, err := src.(connector.FieldLister).Fields(context.Background())
	if !errors.Is(err, connector.ErrSchema) || !strings.Contains(err.Error(), "set encoding: utf-16") {
		t.Fatalf("Fields = %v, want a schema error naming encoding: utf-16", err)
	}
}

// TestDerivedIDsStayWhenRowsMove: the ids idFrom derives are the rows'
// own: reordering, adding or removing rows keeps every other row's id.
func TestDerivedIDsStayWhenRowsMove(t *testing.T) {
	dir := t.TempDir()
	ids := func(text string) []string {
		path := filepath.Join(dir, "contacts.csv")
		writeFile(t, path, text)
		src := open(t, settingsFor(path, func(s *csv.Settings) { s.IDFrom = []string{"Email", "Phone"} }))
		defer src.Close()
		recs, err := readAll(context.Background(), src.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.ID+"="+r.Fields["Name"].(string))
		}
		return out
	}
	first := ids("Name,Email,Phone\nAda,ada@example.com,\nGrace,,030 1234567\nAlan,alan@example.com,+49 30 7654321\n")
	again := ids("Name,Email,Phone\nEdsger,edsger@example.com,\nAlan,ALAN@example.com ,+49 30 7654321\nGrace,,030/123 45 67\n")
	if want := []string{"ada@example.com=Ada", "0301234567=Grace", "alan@example.com=Alan"}; !reflect.DeepEqual(first, want) {
		t.Fatalf("first read %v, want %v", first, want)
	}
	if want := []string{"edsger@example.com=Edsger", "alan@example.com=Alan", "0301234567=Grace"}; !reflect.DeepEqual(again, want) {
		t.Fatalf("second read %v, want %v", again, want)
	}
}

func TestFirstValueAndKeyOf(t *testing.T) {
	tests := []struct{ name, cell, first, key string }{
		{"one address", " Ada@Example.COM ", "Ada@Example.COM", "ada@example.com"},
		{"Google's separator", "+1 646-555-0142 ::: +1 917-555-0133", "+1 646-555-0142", "+16465550142"},
		{"semicolon", "a@example.com; b@example.com", "a@example.com", "a@example.com"},
		{"line break", "\n030 123\n040 456", "030 123", "030123"},
		{"empty first part", " ::: b@example.com", "b@example.com", "b@example.com"},
		{"not a number", "n/a", "n/a", "n/a"},
		{"nothing", " ; ", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := csv.FirstValue(tt.cell)
			if first != tt.first {
				t.Errorf("FirstValue(%q) = %q, want %q", tt.cell, first, tt.first)
			}
			if first != "" {
				if key := csv.KeyOf(first); key != tt.key {
					t.Errorf("KeyOf(%q) = %q, want %q", first, key, tt.key)
				}
			}
		})
	}
}
