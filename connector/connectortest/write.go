package connectortest

import (
	"context"
	"errors"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// write applies changes and fails the test unless the call as a whole
// succeeds with one result per change.
func write(t *testing.T, w connector.Writer, changes ...connector.Change) []connector.WriteResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	res, err := w.Write(ctx, changes)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(res) != len(changes) {
		t.Fatalf("Write of %d changes returned %d results", len(changes), len(res))
	}
	for i, c := range changes {
		if res[i].Err == nil && c.Op != connector.OpCreate && res[i].ID != c.ID {
			t.Errorf("result %d (%s of %s) has ID %q", i, c.Op, c.ID, res[i].ID)
		}
	}
	return res
}

// wantApplied fails the test when result i is a failure.
func wantApplied(t *testing.T, res []connector.WriteResult, i int, what string) {
	t.Helper()
	if res[i].Err != nil {
		t.Errorf("%s: %v", what, res[i].Err)
	}
}

func testWrite(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	w, ok := src.(connector.Writer)
	if !ok {
		t.Fatal("the type is Writable but its source is not a Writer")
	}

	if res, err := w.Write(context.Background(), nil); err != nil || len(res) != 0 {
		t.Errorf("Write of no changes = %v, %v; want no results and no error", res, err)
	}

	// Create: results in order, each with a new ID.
	recs := newRecords("w", 2)
	res := write(t, w,
		connector.Change{Op: connector.OpCreate, Fields: h.named(recs[0])},
		connector.Change{Op: connector.OpCreate, Fields: h.named(recs[1])})
	for i := range res {
		wantApplied(t, res, i, "create")
		if res[i].ID == "" {
			t.Fatalf("create %d returned no ID", i)
		}
	}
	a, b := res[0].ID, res[1].ID
	if a == b {
		t.Fatalf("two creates returned one ID %q", a)
	}
	want := map[string]map[string]any{a: recs[0], b: recs[1]}
	checkLive(t, h, src, want)

	// Update: only the given fields change.
	res = write(t, w, connector.Change{Op: connector.OpUpdate, ID: a, Fields: h.named(map[string]any{"email": "changed@example.com"})})
	wantApplied(t, res, 0, "update")
	want[a] = map[string]any{"name": recs[0]["name"], "email": "changed@example.com", "phone": recs[0]["phone"]}
	checkLive(t, h, src, want)

	// A missing record fails on its own, in its place.
	res = write(t, w,
		connector.Change{Op: connector.OpUpdate, ID: h.MissingID, Fields: h.named(map[string]any{"name": "Ghost"})},
		connector.Change{Op: connector.OpUpdate, ID: b, Fields: h.named(map[string]any{"name": "Second"})},
		connector.Change{Op: connector.OpDelete, ID: h.MissingID, Soft: h.SoftDelete})
	if !errors.Is(res[0].Err, connector.ErrNotFound) {
		t.Errorf("update of a missing record: %v, want ErrNotFound", res[0].Err)
	}
	wantApplied(t, res, 1, "update next to a failing one")
	if !errors.Is(res[2].Err, connector.ErrNotFound) {
		t.Errorf("delete of a missing record: %v, want ErrNotFound", res[2].Err)
	}
	want[b] = map[string]any{"name": "Second", "email": recs[1]["email"], "phone": recs[1]["phone"]}
	checkLive(t, h, src, want)

	// Repeating an update changes nothing further.
	res = write(t, w, connector.Change{Op: connector.OpUpdate, ID: b, Fields: h.named(map[string]any{"name": "Second"})})
	wantApplied(t, res, 0, "repeated update")
	checkLive(t, h, src, want)

	// Delete, then delete again: the second is harmless.
	res = write(t, w, connector.Change{Op: connector.OpDelete, ID: a, Soft: h.SoftDelete})
	wantApplied(t, res, 0, "delete")
	delete(want, a)
	checkLive(t, h, src, want)
	res = write(t, w, connector.Change{Op: connector.OpDelete, ID: a, Soft: h.SoftDelete})
	if err := res[0].Err; err != nil && !errors.Is(err, connector.ErrNotFound) {
		t.Errorf("repeated delete: %v, want success or ErrNotFound", err)
	}
	checkLive(t, h, src, want)

	// An update of the deleted record finds nothing.
	res = write(t, w, connector.Change{Op: connector.OpUpdate, ID: a, Fields: h.named(map[string]any{"name": "Back"})})
	if !errors.Is(res[0].Err, connector.ErrNotFound) {
		t.Errorf("update of a deleted record: %v, want ErrNotFound", res[0].Err)
	}
	checkLive(t, h, src, want)
}

// checkLive fails the test unless a snapshot holds exactly the records
// of want with those fields.
func checkLive(t *testing.T, h Harness, src connector.Source, want map[string]map[string]any) {
	t.Helper()
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	r := snapshot(t, src)
	wantExactly(t, "Snapshot after write", r.records(), ids)
	for _, rec := range r.records() {
		if f, ok := want[rec.ID]; ok {
			wantFields(t, h, rec, f)
		}
	}
}
