package csv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/csv"
)

func TestCountIsTheRowsARead(t *testing.T) {
	for _, tc := range []struct {
		name, body string
	}{
		{"plain", "id,name\n1,a\n2,b\n3,c\n"},
		{"no final line break", "id,name\n1,a\n2,b"},
		{"crlf and blank lines", "id,name\r\n1,a\r\n\r\n2,b\r\n\n"},
		{"quoted line breaks and quotes", "id,name\n1,\"two\nlines\"\n2,\"say \"\"hi\"\"\nthere\"\n3,c\n"},
		{"header only", "id,name\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.csv")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			src := open(t, settingsFor(path))
			recs, err := readAll(context.Background(), src.Snapshot)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.(connector.Counter).Count(context.Background(), "", false)
			if err != nil {
				t.Fatal(err)
			}
			want := connector.Total{N: int64(len(recs)), Known: true}
			if got != want {
				t.Errorf("Count = %+v, the read delivered %d records", got, len(recs))
			}
		})
	}
}

func TestCountEstimatesALargeFileFromItsSize(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,name,email\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "%d,Person %d,p%d@example.com\n", i+1, i, i)
	}
	path := filepath.Join(t.TempDir(), "c.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src := open(t, settingsFor(path))
	csv.SetCountLimits(src, 1000, 64<<10) // the first 64 KiB of about 660 KiB
	got, err := src.(connector.Counter).Count(context.Background(), "", true)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Known || !got.Estimate {
		t.Fatalf("Count = %+v, want a known estimate", got)
	}
	// The first rows have shorter ids than the rest: the estimate is a
	// little high, as it is for any file whose rows grow.
	if got.N < 18000 || got.N > 22000 {
		t.Errorf("estimate %d is not within 10%% of the 20000 rows", got.N)
	}
	if got.N == 20000 {
		t.Errorf("the estimate is the exact count: the file was not sampled")
	}
}

func TestReestimateConvergesAsTheReadGoesOn(t *testing.T) {
	const rows = 200000
	var b strings.Builder
	b.WriteString("id,name,email\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,Person %d,p%d@example.com\n", i+1, i, i)
	}
	path := filepath.Join(t.TempDir(), "c.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src := open(t, settingsFor(path, func(s *csv.Settings) { s.BatchSize = 5000 }))
	csv.SetCountLimits(src, 1000, 256<<10)
	first, err := src.(connector.Counter).Count(context.Background(), "", false)
	if err != nil || !first.Estimate {
		t.Fatalf("Count = %+v, %v: want an estimate", first, err)
	}
	re := src.(connector.Reestimator)
	var done int64
	var early bool
	var last connector.Total
	err = src.Changes(context.Background(), "", func(_ context.Context, bt connector.Batch) error {
		done += int64(len(bt.Records))
		tot, ok := re.Reestimate(done)
		if done <= rows/20 && ok {
			early = true
		}
		if ok {
			if !tot.Known || !tot.Estimate {
				t.Fatalf("Reestimate(%d) = %+v: want a known estimate", done, tot)
			}
			last = tot
			if done == rows/2 {
				t.Logf("halfway: %d (Count said %d)", tot.N, first.N)
				// The later rows are longer (their numbers have more
				// digits): the estimate is still high, but much less so
				// than Count's from the first rows.
				if off(tot.N, rows) > 0.05 || off(tot.N, rows) >= off(first.N, rows) {
					t.Errorf("halfway the estimate is %d, more than 5%% off %d or no better than Count's %d", tot.N, rows, first.N)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if early {
		t.Error("Reestimate answered before a tenth of the file was read")
	}
	if last.N != rows {
		t.Errorf("at the last batch the estimate is %d, want the %d rows read", last.N, rows)
	}
}

func off(n, want int64) float64 {
	d := float64(n-want) / float64(want)
	if d < 0 {
		return -d
	}
	return d
}
