package reconcile

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// records reads the env's CSV as the reconciler's source gives it.
func (e *env) records(r *Reconciler) []connector.Record {
	e.t.Helper()
	var out []connector.Record
	err := r.opts.Reader.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error {
		out = append(out, b.Records...)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// skipped runs skipUnchanged over every record and returns how many it
// set aside without mapping.
func (e *env) skipped() int {
	e.t.Helper()
	r := e.reconciler()
	p, err := r.newPass("test")
	if err != nil {
		e.t.Fatal(err)
	}
	_, skipped, err := p.skip.skipUnchanged(e.records(r))
	if err != nil {
		e.t.Fatal(err)
	}
	return len(skipped)
}

// TestUnchangedRecordsAreNotMapped: after a pass, every record's link
// holds its fingerprint, and the next pass sets the records aside before
// mapping; an edit of a mapped column brings a record back.
func TestUnchangedRecordsAreNotMapped(t *testing.T) {
	e := newEnv(t, 150, emulator.Options{})
	e.run()
	if n := e.skipped(); n != 150 {
		t.Fatalf("%d of 150 unchanged records set aside before mapping, want all", n)
	}
	e.rows[3] = row(3, "v2")
	e.writeCSV()
	if n := e.skipped(); n != 149 {
		t.Fatalf("%d records set aside after one mapped column changed, want 149", n)
	}
	sum := e.run()
	if sum.Updated != 1 || sum.Unchanged != 149 {
		t.Fatalf("summary %v, want 1 updated and 149 unchanged", sum)
	}
	if n := e.skipped(); n != 150 {
		t.Fatalf("%d set aside after the update was written, want 150", n)
	}
}

// TestUnmappedColumnEditCostsNothing: a column the mapping does not read
// changes in every row: no call, no write, and no mapping.
func TestUnmappedColumnEditCostsNothing(t *testing.T) {
	e := newEnv(t, 120, emulator.Options{})
	e.rows[0] = append(e.rows[0], "notes")
	for i := 1; i < len(e.rows); i++ {
		e.rows[i] = append(e.rows[i], "first note")
	}
	e.writeCSV()
	e.run()
	for i := 1; i < len(e.rows); i++ {
		e.rows[i][len(e.rows[i])-1] = "edited"
	}
	e.writeCSV()
	if n := e.skipped(); n != 120 {
		t.Fatalf("%d of 120 records set aside, want all: the edited column is not mapped", n)
	}
	before := e.emu.Stats()
	sum := e.run()
	posts, patches, deletes := e.writes(before)
	if sum.APICalls != 0 || posts+patches+deletes != 0 || sum.Unchanged != 120 {
		t.Fatalf("summary %v, writes %d/%d/%d: want no call at all", sum, posts, patches, deletes)
	}
}

// TestMappingEditReevaluatesEveryRecord: a changed mapping maps every
// record once more and PATCHes only those whose values change; the pass
// after it sets them all aside again.
func TestMappingEditReevaluatesEveryRecord(t *testing.T) {
	e := newEnv(t, 100, emulator.Options{})
	for _, i := range []int{10, 20, 30} {
		e.rows[i][5] = "" // no score
	}
	e.writeCSV()
	e.run()
	spec := testSpec()
	score := spec.Fields["custom.score"]
	score.Transform = []string{"default:0"}
	spec.Fields["custom.score"] = score
	e.spec = &spec
	if n := e.skipped(); n != 0 {
		t.Fatalf("%d records set aside under a changed mapping, want none", n)
	}
	before := e.emu.Stats()
	sum := e.run()
	posts, patches, deletes := e.writes(before)
	if patches != 3 || posts+deletes != 0 || sum.Updated != 3 || sum.Unchanged != 97 {
		t.Fatalf("summary %v, writes POST %d PATCH %d DELETE %d: want exactly the 3 rows without a score patched", sum, posts, patches, deletes)
	}
	for _, c := range e.emu.Contacts() {
		if ext := deref(c.ExternalID); ext == "10" || ext == "20" || ext == "30" {
			if len(c.CustomFields) != 1 || c.CustomFields[0].Value.IsEmpty() {
				t.Errorf("contact %s: custom fields %+v, want the default score", ext, c.CustomFields)
			}
		}
	}
	if n := e.skipped(); n != 100 {
		t.Fatalf("%d records set aside after the re-evaluation, want all 100", n)
	}
	// Back to the old mapping: the 3 go back, the others cost no call.
	e.spec = nil
	before = e.emu.Stats()
	sum = e.run()
	if _, patches, _ := e.writes(before); patches != 3 || sum.Unchanged != 97 {
		t.Fatalf("mapping reverted: summary %v, %d PATCHes; want the 3 patched back", sum, patches)
	}
}
