package reconcile

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/syncd-io/syncd/connector"
	csvconn "github.com/syncd-io/syncd/connector/csv"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// BenchmarkUnchangedPass is a scheduled pass over a CSV source whose rows
// are all linked and unchanged: read, fingerprint, compare with the links,
// mark seen. ns/op is per row.
func BenchmarkUnchangedPass(b *testing.B) {
	const rows = 3_000
	dir := b.TempDir()
	path := filepath.Join(dir, "contacts.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"id", "first_name", "last_name", "email", "mobile", "score"})
	for i := 1; i <= rows; i++ {
		_ = w.Write(row(i, "v1"))
	}
	w.Flush()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	emu := emulator.NewServer(emulator.Options{APIKey: "k", Rate: -1,
		CustomFields: []workspace.CustomFieldDefinition{{Name: "Score", Key: "score", Type: "number"}}})
	defer emu.Close()
	ws, err := workspace.NewClient(workspace.ClientOptions{BaseURL: emu.URL, APIKey: "k", RateLimit: 100000, Burst: 1000, Log: quietLog(),
		CustomFieldValues: emulator.TestCustomFieldValues()})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ws.LoadCustomFields(context.Background()); err != nil {
		b.Fatal(err)
	}
	store, err := state.Open(filepath.Join(dir, "syncd.db"), state.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	typ, _ := connector.Lookup(csvconn.TypeName)
	settings := csvconn.NewSettings()
	settings.Path, settings.BatchSize = path, 500
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: settings, Log: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	m, err := mapping.Compile(testSpec(), "to-workspace", nil)
	if err != nil {
		b.Fatal(err)
	}
	m.SetCustomFieldTypes(ws)
	r, err := New(Options{Connector: "crm", Source: testSource, Type: typ, Reader: src, Mapper: m,
		Store: StoreOf(store), Workspace: ws, Workers: 8, Log: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	if sum, err := r.Run(context.Background()); err != nil || sum.Created != rows {
		b.Fatal(sum, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sum, err := r.Run(context.Background())
		if err != nil || sum.Unchanged != rows || sum.APICalls != 0 {
			b.Fatal(sum, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}
