package connectortest

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// testCount checks a Counter against the reads it stands for: the count
// before a read is what the read then delivers (within 10% when the
// total is an estimate), from the beginning, after an update and for a
// snapshot. Sources that are not Counters are skipped.
func testCount(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	c, ok := src.(connector.Counter)
	if !ok {
		t.Skipf("connector type %q does not implement connector.Counter", h.Type.Name)
	}
	ids, _ := insert(t, s, "a", 2*h.BatchSize+1)

	wantCount(t, c, "", false, func() int { return len(changes(t, src, "", 0).records()) })
	cp := changes(t, src, "", 0).lastCheckpoint("")
	s.Update(t, map[string]any{"name": "Renamed"}, ids[1])
	wantCount(t, c, cp, false, func() int { return len(changes(t, src, cp, 0).records()) })
	wantCount(t, c, "", true, func() int { return len(snapshot(t, src).records()) })
}

// wantCount compares Count(checkpoint, snap) taken before the read with
// what read then delivers.
func wantCount(t *testing.T, c connector.Counter, checkpoint string, snap bool, read func() int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	got, err := c.Count(ctx, checkpoint, snap)
	if err != nil {
		t.Fatalf("Count(%q, snapshot=%v): %v", checkpoint, snap, err)
	}
	n := read()
	switch {
	case !got.Known:
		if got.N != 0 || got.Estimate {
			t.Errorf("Count(%q, snapshot=%v) = %+v: an unknown total carries no figure", checkpoint, snap, got)
		}
	case got.Estimate:
		if d := got.N - int64(n); d*10 > int64(n) || -d*10 > int64(n) {
			t.Errorf("Count(%q, snapshot=%v) = %+v, more than 10%% off the %d records read", checkpoint, snap, got, n)
		}
	case got.N != int64(n):
		t.Errorf("Count(%q, snapshot=%v) = %d, but the read delivered %d records", checkpoint, snap, got.N, n)
	}
}
