package sqlkit

import (
	"fmt"
	"reflect"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// What the change streams of the SQL connectors share (PostgreSQL's
// logical replication, MySQL's binlog).

// LatestPerID keeps the last record of each id, in the order of those
// last records, so that a batch holds one version per row and its
// records keep their commit order.
func LatestPerID(recs []connector.Record) []connector.Record {
	versions := make(map[string][]int, len(recs))
	for i, r := range recs {
		versions[r.ID] = append(versions[r.ID], i)
	}
	if len(versions) == len(recs) {
		return append([]connector.Record(nil), recs...)
	}
	out := make([]connector.Record, 0, len(versions))
	for i, r := range recs {
		vs := versions[r.ID]
		if vs[len(vs)-1] == i {
			out = append(out, withFieldsAt(recs, vs))
		}
	}
	return out
}

// withFieldsAt returns the last of the versions vs (indexes into recs,
// oldest first) with FieldsAt set: for each field, the UpdatedAt of the
// oldest of the consecutive versions, going back from the last, that
// hold its value, when older than the last's.
func withFieldsAt(recs []connector.Record, vs []int) connector.Record {
	r := recs[vs[len(vs)-1]]
	if r.Deleted || r.UpdatedAt.IsZero() {
		return r
	}
	var at map[string]time.Time
	for k, v := range r.Fields {
		t := r.UpdatedAt
		for j := len(vs) - 2; j >= 0; j-- {
			o := recs[vs[j]]
			ov, ok := o.Fields[k]
			if o.Deleted || !ok || o.UpdatedAt.IsZero() || !reflect.DeepEqual(ov, v) {
				break
			}
			t = o.UpdatedAt
		}
		if t.Before(r.UpdatedAt) {
			if at == nil {
				at = map[string]time.Time{}
			}
			at[k] = t
		}
	}
	r.FieldsAt = at
	return r
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
