package csv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
)

func TestIDSetFindsRepeatsInMemoryAndSpilled(t *testing.T) {
	const n = 50_000
	s := newIDSet(7_000) // several spilled runs, and a part in memory
	defer s.close()
	for i := range n {
		seen, err := s.add(fmt.Sprintf("id-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if seen {
			t.Fatalf("id-%d reported seen before it was added", i)
		}
	}
	if len(s.runs) != n/7_000 || s.n != n%7_000 {
		t.Fatalf("%d runs and %d in memory, want %d and %d", len(s.runs), s.n, n/7_000, n%7_000)
	}
	for _, i := range []int{0, 1, 6_999, 7_000, 20_123, n - 2, n - 1} {
		seen, err := s.add(fmt.Sprintf("id-%d", i))
		if err != nil || !seen {
			t.Errorf("id-%d added again: seen %v, %v; want seen", i, seen, err)
		}
	}
	if seen, _ := s.add("id-new"); seen {
		t.Error("a new id reported seen")
	}
}

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

// BenchmarkIDSetAdd is the repeated-ID check of one row.
func BenchmarkIDSetAdd(b *testing.B) {
	s := newIDSet(0)
	defer s.close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if seen, err := s.add(strconv.Itoa(i)); err != nil || seen {
			b.Fatal(seen, err)
		}
		i++
	}
}
