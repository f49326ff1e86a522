package sqlkit

import (
	"fmt"

	"github.com/syncd-io/syncd/connector"
)

// What the change streams of the SQL connectors share (PostgreSQL's
// logical replication, MySQL's binlog).

// LatestPerID keeps the last record of each id, in the order of those
// last records, so that a batch holds one version per row and its
// records keep their commit order.
func LatestPerID(recs []connector.Record) []connector.Record {
	last := make(map[string]int, len(recs))
	for i, r := range recs {
		last[r.ID] = i
	}
	if len(last) == len(recs) {
		return append([]connector.Record(nil), recs...)
	}
	out := make([]connector.Record, 0, len(last))
	for i, r := range recs {
		if last[r.ID] == i {
			out = append(out, r)
		}
	}
	return out
}

// ByteSize writes n bytes as 980 B, 12 kB, 3.4 MB or 1.2 GB: how far a
// stream is behind, on status pages.
func ByteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", max(n, 0))
	case n < 1000*1000:
		return fmt.Sprintf("%d kB", n/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
