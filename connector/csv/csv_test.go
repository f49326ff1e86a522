package csv_test

import (
	"context"
	stdcsv "encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/csv"
)

// fileStore keeps a CSV file in a test's temporary folder, rewriting it
// whole on every change as an export would.
type fileStore struct {
	path  string
	next  int
	order []string
	rows  map[string]map[string]any
}

func newFileStore(t *testing.T) connectortest.Store {
	s := &fileStore{path: filepath.Join(t.TempDir(), "contacts.csv"), rows: map[string]map[string]any{}}
	s.write(t)
	return s
}

func (s *fileStore) write(t *testing.T) {
	t.Helper()
	f, err := os.Create(s.path)
	if err != nil {
		t.Fatal(err)
	}
	w := stdcsv.NewWriter(f)
	header := append([]string{"id"}, connectortest.Fields...)
	_ = w.Write(header)
	for _, id := range s.order {
		row := []string{id}
		for _, name := range connectortest.Fields {
			v, _ := s.rows[id][name].(string)
			row = append(row, v)
		}
		_ = w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func (s *fileStore) Open(t *testing.T) connector.Source {
	t.Helper()
	return open(t, &csv.Settings{Path: s.path, Delimiter: ",", IDColumn: "id", Encoding: "utf-8", BatchSize: 3})
}

func (s *fileStore) Insert(t *testing.T, recs ...map[string]any) []string {
	t.Helper()
	ids := make([]string, 0, len(recs))
	for _, rec := range recs {
		s.next++
		id := strconv.Itoa(s.next)
		row := map[string]any{}
		for k, v := range rec {
			row[k] = v
		}
		s.rows[id] = row
		s.order = append(s.order, id)
		ids = append(ids, id)
	}
	s.write(t)
	return ids
}

func (s *fileStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	t.Helper()
	for _, id := range ids {
		for k, v := range fields {
			s.rows[id][k] = v
		}
	}
	s.write(t)
}

func (s *fileStore) Delete(t *testing.T, id string) {
	t.Helper()
	delete(s.rows, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.write(t)
}

// open opens a csv source through the registry, as the daemon does.
func open(t *testing.T, settings *csv.Settings, fields ...string) connector.Source {
	t.Helper()
	typ, ok := connector.Lookup(csv.TypeName)
	if !ok {
		t.Fatal("csv connector not registered")
	}
	src, err := typ.Open(context.Background(), connector.Options{Name: "test", Settings: settings, Fields: fields})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return src
}

func TestRegisteredType(t *testing.T) {
	typ, ok := connector.Lookup("csv")
	if !ok {
		t.Fatal("type csv not registered")
	}
	if typ.Writable || typ.Incremental || typ.SoftDelete {
		t.Errorf("csv type is Writable=%v Incremental=%v SoftDelete=%v, want all false", typ.Writable, typ.Incremental, typ.SoftDelete)
	}
	got := typ.NewSettings()
	want := &csv.Settings{Delimiter: ",", IDColumn: "id", Encoding: "utf-8", BatchSize: 500, Watch: true, Settle: csv.DefaultSettle}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewSettings() = %+v, want %+v", got, want)
	}
}

func TestSettingsValidate(t *testing.T) {
	valid := func(mod func(s *csv.Settings)) *csv.Settings {
		s := csv.NewSettings()
		s.Path = "/nonexistent/never/opened.csv"
		mod(s)
		return s
	}
	tests := []struct {
		name     string
		settings *csv.Settings
		want     []string // one substring per expected error
	}{
		{"defaults with a path, file not opened", valid(func(*csv.Settings) {}), nil},
		{"semicolon", valid(func(s *csv.Settings) { s.Delimiter = ";" }), nil},
		{"tab character", valid(func(s *csv.Settings) { s.Delimiter = "\t" }), nil},
		{"tab word", valid(func(s *csv.Settings) { s.Delimiter = "tab" }), nil},
		{"escaped tab", valid(func(s *csv.Settings) { s.Delimiter = `\t` }), nil},
		{"encoding spelled utf8", valid(func(s *csv.Settings) { s.Encoding = "UTF8" }), nil},
		{"no path", valid(func(s *csv.Settings) { s.Path = "" }), []string{"path: required"}},
		{"two-character delimiter", valid(func(s *csv.Settings) { s.Delimiter = ";;" }), []string{"delimiter: "}},
		{"quote as delimiter", valid(func(s *csv.Settings) { s.Delimiter = `"` }), []string{"delimiter: "}},
		{"newline as delimiter", valid(func(s *csv.Settings) { s.Delimiter = "\n" }), []string{"delimiter: "}},
		{"empty delimiter", valid(func(s *csv.Settings) { s.Delimiter = "" }), []string{"delimiter: required"}},
		{"no id column", valid(func(s *csv.Settings) { s.IDColumn = " " }), []string{"idColumn: required"}},
		{"latin1", valid(func(s *csv.Settings) { s.Encoding = "latin1" }), nil},
		{"windows-1252", valid(func(s *csv.Settings) { s.Encoding = "Windows-1252" }), nil},
		{"utf-16", valid(func(s *csv.Settings) { s.Encoding = "utf-16" }), nil},
		{"ebcdic", valid(func(s *csv.Settings) { s.Encoding = "ebcdic" }), []string{"encoding: \"ebcdic\" not supported; use one of utf-8, iso-8859-1"}},
		{"id from e-mail and phone columns", valid(func(s *csv.Settings) { s.IDFrom = []string{"E-mail 1 - Value", "Phone 1 - Value"} }), nil},
		{"id from with an id column", valid(func(s *csv.Settings) { s.IDFrom = []string{"Email"}; s.IDColumn = "Record ID" }), []string{"idFrom: set with idColumn \"Record ID\""}},
		{"id from an empty name, twice a name", valid(func(s *csv.Settings) { s.IDFrom = []string{"Email", " ", "Email"} }), []string{"idFrom[1]: empty", "idFrom[2]: \"Email\" named twice"}},
		{"id column with its quotes", valid(func(s *csv.Settings) { s.IDColumn = `"Record ID"` }), []string{`idColumn: "\"Record ID\"" is quoted as in the file's text; the column's name is "Record ID"`}},
		{"id column with a byte order mark", valid(func(s *csv.Settings) { s.IDColumn = "\ufeffRecord ID" }), []string{`idColumn: "\ufeffRecord ID" starts with a byte order mark`}},
		{"zero batch", valid(func(s *csv.Settings) { s.BatchSize = 0 }), []string{"batchSize: "}},
		{"huge batch", valid(func(s *csv.Settings) { s.BatchSize = 1 << 20 }), []string{"batchSize: "}},
		{"every problem at once", &csv.Settings{Delimiter: "ab", Encoding: "ascii"},
			[]string{"path: ", "delimiter: ", "idColumn: ", "encoding: ", "batchSize: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.settings.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestOpenRefusesInvalidSettings(t *testing.T) {
	typ, _ := connector.Lookup(csv.TypeName)
	_, err := typ.Open(context.Background(), connector.Options{Name: "bad", Settings: &csv.Settings{Delimiter: ","}})
	if err == nil || !strings.Contains(err.Error(), "path: required") {
		t.Fatalf("Open with no path = %v, want an error naming path", err)
	}
}
