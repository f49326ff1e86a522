package connectortest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// errStop is what the suite's batch functions return to simulate a crash.
var errStop = errors.New("connectortest: stop requested")

// readTimeout bounds every read of the suite so that a hanging source
// fails its test rather than the whole run.
const readTimeout = 60 * time.Second

// read is the outcome of one Changes or Snapshot call.
type read struct {
	batches []connector.Batch
	err     error
}

// records returns the records of every batch, in order.
func (r read) records() []connector.Record {
	var out []connector.Record
	for _, b := range r.batches {
		out = append(out, b.Records...)
	}
	return out
}

// lastCheckpoint returns the checkpoint of the last batch, or from when
// there was none.
func (r read) lastCheckpoint(from string) string {
	if len(r.batches) == 0 {
		return from
	}
	return r.batches[len(r.batches)-1].Checkpoint
}

// stopAfter returns a batch function that records batches and fails with
// errStop once it has received n of them (never when n <= 0).
func stopAfter(r *read, n int) connector.BatchFunc {
	return func(ctx context.Context, b connector.Batch) error {
		b.Records = append([]connector.Record(nil), b.Records...)
		r.batches = append(r.batches, b)
		if n > 0 && len(r.batches) >= n {
			return errStop
		}
		return nil
	}
}

// changes calls Changes from checkpoint and returns what it delivered.
// A failure other than errStop fails the test.
func changes(t *testing.T, src connector.Source, checkpoint string, stopAt int) read {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	var r read
	r.err = src.Changes(ctx, checkpoint, stopAfter(&r, stopAt))
	if r.err != nil && !errors.Is(r.err, errStop) {
		t.Fatalf("Changes(%q): %v", checkpoint, r.err)
	}
	return r
}

// snapshot calls Snapshot and returns what it delivered.
func snapshot(t *testing.T, src connector.Source) read {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	var r read
	if r.err = src.Snapshot(ctx, stopAfter(&r, 0)); r.err != nil {
		t.Fatalf("Snapshot: %v", r.err)
	}
	return r
}

// checkBatches fails the test when a batch is larger than the harness's
// batch size, or when its checkpoint is not what the read kind requires
// (present in Changes, absent in Snapshot).
func checkBatches(t *testing.T, h Harness, r read, snapshot bool) {
	t.Helper()
	for i, b := range r.batches {
		if len(b.Records) > h.BatchSize {
			t.Errorf("batch %d holds %d records, more than the batch size %d", i, len(b.Records), h.BatchSize)
		}
		if snapshot && b.Checkpoint != "" {
			t.Errorf("snapshot batch %d carries checkpoint %q, want none", i, b.Checkpoint)
		}
		if !snapshot && b.Checkpoint == "" {
			t.Errorf("changes batch %d carries no checkpoint", i)
		}
	}
}

// byID indexes records by ID and fails the test on an empty ID or, when
// once is set, on a record delivered twice.
func byID(t *testing.T, recs []connector.Record, once bool) map[string]connector.Record {
	t.Helper()
	m := make(map[string]connector.Record, len(recs))
	for _, rec := range recs {
		if rec.ID == "" {
			t.Errorf("record with empty ID: %v", rec.Fields)
			continue
		}
		if _, dup := m[rec.ID]; dup && once {
			t.Errorf("record %s delivered twice", rec.ID)
		}
		m[rec.ID] = rec
	}
	return m
}

// wantExactly fails the test unless recs hold each of ids exactly once
// and nothing else.
func wantExactly(t *testing.T, what string, recs []connector.Record, ids []string) {
	t.Helper()
	got := byID(t, recs, true)
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
		if _, ok := got[id]; !ok {
			t.Errorf("%s: record %s missing", what, id)
		}
	}
	var extra []string
	for id := range got {
		if !want[id] {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		t.Errorf("%s: unexpected records %s", what, strings.Join(extra, ", "))
	}
}

// wantCovered fails the test unless every id is among recs (repeats
// allowed).
func wantCovered(t *testing.T, what string, recs []connector.Record, ids []string) {
	t.Helper()
	got := byID(t, recs, false)
	var missing []string
	for _, id := range ids {
		if _, ok := got[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s: %d of %d records skipped: %s", what, len(missing), len(ids), strings.Join(missing, ", "))
	}
}

// wantFields fails the test unless rec holds every field of want (by
// the suite's names) with that value.
func wantFields(t *testing.T, h Harness, rec connector.Record, want map[string]any) {
	t.Helper()
	for k, v := range want {
		k = h.field(k)
		if got, ok := rec.Fields[k]; !ok || got != v {
			t.Errorf("record %s field %s = %#v, want %#v", rec.ID, k, got, v)
		}
	}
}

// newRecords returns n records with distinct field values, tagged so that
// records of different calls differ too.
func newRecords(tag string, n int) []map[string]any {
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = map[string]any{
			"name":  fmt.Sprintf("Name %s-%d", tag, i),
			"email": fmt.Sprintf("%s-%d@example.com", tag, i),
			"phone": fmt.Sprintf("+1555%07d", i),
		}
	}
	return recs
}

// insert adds n records one Insert call at a time (distinct change
// times where the system keeps them) and returns their IDs and fields.
func insert(t *testing.T, s Store, tag string, n int) ([]string, map[string]map[string]any) {
	t.Helper()
	ids := make([]string, 0, n)
	fields := make(map[string]map[string]any, n)
	for _, rec := range newRecords(tag, n) {
		id := s.Insert(t, rec)
		if len(id) != 1 {
			t.Fatalf("Insert of one record returned %d IDs", len(id))
		}
		ids = append(ids, id[0])
		fields[id[0]] = rec
	}
	return ids, fields
}

// insertGroup adds n records in one Insert call.
func insertGroup(t *testing.T, s Store, tag string, n int) []string {
	t.Helper()
	ids := s.Insert(t, newRecords(tag, n)...)
	if len(ids) != n {
		t.Fatalf("Insert of %d records returned %d IDs", n, len(ids))
	}
	return ids
}

// open opens a source on s and closes it at the test's end, failing the
// test when Close fails.
func open(t *testing.T, s Store) connector.Source {
	t.Helper()
	src := s.Open(t)
	t.Cleanup(func() {
		if err := src.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return src
}

func without(ids []string, drop ...string) []string {
	out := make([]string, 0, len(ids))
outer:
	for _, id := range ids {
		for _, d := range drop {
			if id == d {
				continue outer
			}
		}
		out = append(out, id)
	}
	return out
}
