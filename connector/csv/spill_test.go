package csv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
)

// TestRepeatedIDAfterSpill: a file whose repeat lies in a spilled run is
// refused with both line numbers, as one found in memory is.
func TestRepeatedIDAfterSpill(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := 1; i <= 5_000; i++ {
		fmt.Fprintf(&b, "%d,n%d\n", i, i)
	}
	b.WriteString("17,again\n")
	path := filepath.Join(t.TempDir(), "repeat.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src := &Source{path: path, delim: ',', idColumn: "id", batchSize: 500, spillAt: 1_000,
		log: logrus.NewEntry(logrus.New())}
	err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `line 5002: id "17" repeats the row of line 18`) {
		t.Fatalf("read: %v, want the repeat of line 18 at line 5002", err)
	}
}
