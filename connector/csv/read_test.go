package csv_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/csv"
)

func settingsFor(path string, mod ...func(*csv.Settings)) *csv.Settings {
	s := csv.NewSettings()
	s.Path = path
	s.BatchSize = 2
	for _, m := range mod {
		m(s)
	}
	return s
}

// readAll reads the whole source through read and returns the records.
func readAll(ctx context.Context, read func(context.Context, connector.BatchFunc) error) ([]connector.Record, error) {
	var recs []connector.Record
	err := read(ctx, func(_ context.Context, b connector.Batch) error {
		recs = append(recs, b.Records...)
		return nil
	})
	return recs, err
}

func TestReadFiles(t *testing.T) {
	tests := []struct {
		file    string
		mod     func(*csv.Settings)
		want    []connector.Record
		wantErr []string // substrings of the error, after the file's path
		// wantBad: the Invalid error of each record marked so, by record
		// ID (its want entry has no Invalid).
		wantBad map[string]string
	}{
		{
			file: "semicolon_with_bom.csv",
			mod:  func(s *csv.Settings) { s.Delimiter = ";" },
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada Lovelace", "note": "first; with semicolon"}},
				{ID: "2", Fields: map[string]any{"id": "2", "name": `Grace "Amazing" Hopper`, "note": "two\nlines"}},
			},
		},
		{
			file: "tab_delimited.tsv",
			mod:  func(s *csv.Settings) { s.Delimiter = "tab" },
			want: []connector.Record{
				{ID: "7", Fields: map[string]any{"id": "7", "name": "Alan", "email": "alan@example.com"}},
				{ID: "8", Fields: map[string]any{"id": "8", "name": "Edsger", "email": ""}},
			},
		},
		{file: "header_only.csv", want: nil},
		{
			file: "semicolon_with_bom.csv",
			mod:  func(s *csv.Settings) { s.Delimiter = ";"; s.IDColumn = "name" },
			want: []connector.Record{
				{ID: "Ada Lovelace", Fields: map[string]any{"id": "1", "name": "Ada Lovelace", "note": "first; with semicolon"}},
				{ID: `Grace "Amazing" Hopper`, Fields: map[string]any{"id": "2", "name": `Grace "Amazing" Hopper`, "note": "two\nlines"}},
			},
		},
		{file: "wrong_field_count.csv",
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada", "email": "ada@example.com"}},
				{ID: "2", Fields: map[string]any{"id": "2"}},
				{ID: "3", Fields: map[string]any{"id": "3", "name": "Alan", "email": "alan@example.com"}},
			},
			wantBad: map[string]string{"2": "wrong_field_count.csv line 3: 2 fields, the header has 3"}},
		{file: "duplicate_id.csv", wantErr: []string{"line 5: id \"2\" repeats the row of line 3"}},
		{file: "empty_id.csv",
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada"}},
				{ID: "line 3"},
			},
			wantBad: map[string]string{"line 3": "empty_id.csv line 3: empty id in column \"id\""}},
		{file: "missing_id_column.csv", wantErr: []string{"line 1: no id column \"id\" in header"}},
		{file: "duplicate_header.csv", wantErr: []string{"line 1: header names \"name\" in columns 2 and 3"}},
		{file: "invalid_utf8.csv",
			want: []connector.Record{
				{ID: "1", Fields: map[string]any{"id": "1", "name": "Ada"}},
				{ID: "2", Fields: map[string]any{"id": "2"}},
			},
			wantBad: map[string]string{"2": "invalid_utf8.csv line 3: column \"name\" is not valid UTF-8"}},
		{file: "unterminated_quote.csv",
			want: []connector.Record{
				{ID: "line 2"},
				{ID: "2", Fields: map[string]any{"id": "2", "name": "Grace"}},
			},
			wantBad: map[string]string{"line 2": `unterminated_quote.csv line 2: extraneous or missing " in quoted-field (a quoted field opened on this line does not close properly; it would take in line 3)`}},
		{file: "empty_file.csv", wantErr: []string{"empty file, no header line"}},
		{file: "no_such_file.csv", wantErr: []string{"no such file"}},
	}
	for _, tt := range tests {
		name := strings.TrimSuffix(tt.file, filepath.Ext(tt.file))
		if tt.mod != nil && tt.want != nil && tt.want[0].ID != "1" && tt.want[0].ID != "7" {
			name += " keyed by name"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			mods := []func(*csv.Settings){}
			if tt.mod != nil {
				mods = append(mods, tt.mod)
			}
			src := open(t, settingsFor(path, mods...))
			defer src.Close()
			reads := map[string]func(context.Context, connector.BatchFunc) error{
				"Changes":  func(ctx context.Context, fn connector.BatchFunc) error { return src.Changes(ctx, "", fn) },
				"Snapshot": src.Snapshot,
			}
			for method, read := range reads {
				got, err := readAll(context.Background(), read)
				if tt.wantErr != nil {
					if err == nil {
						t.Fatalf("%s read %d records, want an error", method, len(got))
					}
					if !strings.Contains(err.Error(), path) {
						t.Errorf("%s error %q does not name the file", method, err)
					}
					for _, w := range tt.wantErr {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("%s error %q does not contain %q", method, err, w)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				for i, r := range got {
					if r.Invalid == nil {
						if _, ok := tt.wantBad[r.ID]; ok {
							t.Errorf("%s: record %s is not marked invalid", method, r.ID)
						}
						continue
					}
					if w, ok := tt.wantBad[r.ID]; !ok || !strings.Contains(r.Invalid.Error(), w) {
						t.Errorf("%s: record %s invalid: %v, want %q", method, r.ID, r.Invalid, w)
					}
					got[i].Invalid = nil
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s = %+v, want %+v", method, got, tt.want)
				}
			}
		})
	}
}

func TestRecordsCarryOnlyTheMappedFields(t *testing.T) {
	path := filepath.Join("testdata", "tab_delimited.tsv")
	tab := func(s *csv.Settings) { s.Delimiter = "\t" }

	src := open(t, settingsFor(path, tab), "email")
	got, err := readAll(context.Background(), src.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	want := []connector.Record{
		{ID: "7", Fields: map[string]any{"email": "alan@example.com"}},
		{ID: "8", Fields: map[string]any{"email": ""}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records = %+v, want %+v", got, want)
	}

	src = open(t, settingsFor(path, tab), "email", "phone")
	if _, err := readAll(context.Background(), src.Snapshot); err == nil || !strings.Contains(err.Error(), `no column "phone"`) {
		t.Errorf("read with an unknown mapped field = %v, want an error naming it", err)
	}
}

func TestFieldsAreTheHeader(t *testing.T) {
	src := open(t, settingsFor(filepath.Join("testdata", "semicolon_with_bom.csv"), func(s *csv.Settings) { s.Delimiter = ";" }))
	got, err := src.(connector.FieldLister).Fields(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"id", "name", "note"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Fields() = %q, want %q (byte order mark stripped)", got, want)
	}

	src = open(t, settingsFor(filepath.Join("testdata", "duplicate_header.csv")))
	if _, err := src.(connector.FieldLister).Fields(context.Background()); err == nil {
		t.Error("Fields of a header naming a column twice succeeded")
	}
}

func TestClosedSourceRefusesReads(t *testing.T) {
	src := open(t, settingsFor(filepath.Join("testdata", "header_only.csv")))
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(context.Background(), src.Snapshot); err == nil {
		t.Error("Snapshot of a closed source succeeded")
	}
}

func TestRowsAreDeliveredBeforeALaterError(t *testing.T) {
	// A bad row fails the read where it stands: the batches before it
	// were delivered, and the caller learns the read is incomplete.
	src := open(t, settingsFor(filepath.Join("testdata", "duplicate_id.csv")))
	got, err := readAll(context.Background(), src.Snapshot)
	if err == nil {
		t.Fatal("read of a file with a repeated id succeeded")
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if want := []string{"1", "2"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("delivered %v before the error, want the full batches %v", ids, want)
	}
	if errors.Is(err, context.Canceled) {
		t.Errorf("error %v is a cancellation", err)
	}
}

// TestMillionRowsInBoundedMemory streams a file of a million rows and
// checks that the live heap stays bounded: as records, the rows would
// take some 400 MB; a read holds one batch of them, plus a few bytes per
// row for the hashes of the IDs (idSet).
func TestMillionRowsInBoundedMemory(t *testing.T) {
	const rows = 1_000_000
	const limit = 64 << 20
	path := filepath.Join(t.TempDir(), "million.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	buf := []byte("id,name,email\n")
	for i := 0; i < rows; i++ {
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, ",Customer "...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, ",c"...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, "@example.com\n"...)
		if len(buf) > 64<<10 {
			_, _ = w.Write(buf)
			buf = buf[:0]
		}
	}
	_, _ = w.Write(buf)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	n, batches := 0, 0
	src := open(t, settingsFor(path, func(s *csv.Settings) { s.BatchSize = 500 }))
	err = src.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		n += len(b.Records)
		batches++
		if batches%200 == 0 {
			runtime.GC() // live memory, not garbage awaiting collection
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak {
				peak = m.HeapAlloc
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != rows {
		t.Fatalf("read %d rows, want %d", n, rows)
	}
	grown := int64(peak) - int64(base.HeapAlloc)
	t.Logf("heap grew by at most %d MB", grown>>20)
	if grown > limit {
		t.Errorf("heap grew by %d MB reading a million rows, want under %d MB", grown>>20, limit>>20)
	}
}

// TestIDsAreTrimmed: ids are keyed without the Unicode whitespace around
// them, in the record and in the repeated-id check, which names both
// rows when two differ only by it.
func TestIDsAreTrimmed(t *testing.T) {
	tests := []struct {
		name, file string
		wantIDs    []string
		wantErr    string
	}{
		{name: "whitespace around an id", file: "id,name\n\u00a0p100\t,Ann\np200,Bob\n", wantIDs: []string{"p100", "p200"}},
		{name: "two ids that differ by a space", file: "id,name\np100,Ann\n p100,Bob\n",
			wantErr: `line 3: id "p100" repeats the row of line 2 (" p100", once the whitespace around it is trimmed)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ids.csv")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			src := open(t, settingsFor(path))
			defer src.Close()
			got, err := readAll(context.Background(), src.Snapshot)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("read = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
				if r.Fields["id"] != r.ID {
					t.Errorf("record %q carries id field %q", r.ID, r.Fields["id"])
				}
			}
			if !reflect.DeepEqual(ids, tt.wantIDs) {
				t.Errorf("ids %q, want %q", ids, tt.wantIDs)
			}
		})
	}
}
