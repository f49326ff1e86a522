package connectortest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// check is one contract rule.
type check struct {
	name string
	// applies reports whether the rule concerns the harness's connector;
	// nil means always.
	applies func(h Harness) bool
	run     func(t *testing.T, h Harness)
}

func incremental(h Harness) bool { return h.Type.Incremental }

func softIncremental(h Harness) bool { return h.Type.Incremental && h.SoftDelete }

var checks = []check{
	{name: "changes from the beginning deliver every record once", run: testChangesFromStart},
	{name: "resume with nothing changed", run: testResumeUnchanged},
	{name: "resume after an update", run: testResumeAfterUpdate},
	{name: "crash after every batch of equal change times", run: testCrashAfterEveryBatch},
	{name: "crash after every batch of one shared update", run: testCrashInSharedUpdate},
	{name: "one batch per run", applies: incremental, run: testOneBatchPerRun},
	{name: "snapshot holds every live record once", run: testSnapshot},
	{name: "soft deletions surface in changes", applies: softIncremental, run: testSoftDeleteChanges},
	{name: "deleted rows vanish from a complete read", applies: func(h Harness) bool { return !h.Type.Incremental }, run: testDeleteFullRead},
	{name: "cancelled context before the read", run: testCancelBefore},
	{name: "cancelled context during the read", run: testCancelDuring},
	{name: "batch function error is returned wrapped", run: testBatchFuncError},
	{name: "writer matches the type's Writable flag", run: testWritableFlag},
	{name: "source implements exactly the declared capabilities", run: testCapabilities},
	{name: "write back", applies: func(h Harness) bool { return h.Type.Writable }, run: testWrite},
	{name: "creates are staged before their commit", applies: func(h Harness) bool { return h.Type.StagesCreates }, run: testStagedCreates},
	{name: "field lister names the record fields", run: testFieldLister},
	{name: "counter counts what a read delivers", run: testCount},
}

// RunSourceSuite runs every contract check that applies to the harness's
// connector, each as a named subtest on a fresh store.
func RunSourceSuite(t *testing.T, h Harness) {
	if h.New == nil || h.BatchSize < 1 {
		t.Fatal("connectortest: Harness needs New and a BatchSize of at least 1")
	}
	if h.Type.Writable && h.MissingID == "" {
		t.Fatal("connectortest: a writable connector's Harness needs MissingID")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.applies != nil && !c.applies(h) {
				t.Skipf("does not apply to connector type %q", h.Type.Name)
			}
			c.run(t, h)
		})
	}
}

func testChangesFromStart(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, fields := insert(t, s, "a", 2*h.BatchSize+1)

	r := changes(t, src, "", 0)
	checkBatches(t, h, r, false)
	recs := r.records()
	wantExactly(t, "Changes from the beginning", recs, ids)
	for i, rec := range recs {
		if rec.Deleted {
			t.Errorf("record %s is marked deleted", rec.ID)
		}
		wantFields(t, h, rec, fields[rec.ID])
		if i > 0 && !rec.UpdatedAt.IsZero() && rec.UpdatedAt.Before(recs[i-1].UpdatedAt) {
			t.Errorf("record %s (changed %v) comes after a newer change (%v)", rec.ID, rec.UpdatedAt, recs[i-1].UpdatedAt)
		}
	}
}

func testResumeUnchanged(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, _ := insert(t, s, "a", h.BatchSize+1)
	cp := changes(t, src, "", 0).lastCheckpoint("")

	for round := 1; round <= 2; round++ {
		r := changes(t, src, cp, 0)
		if h.Type.Incremental {
			if n := len(r.records()); n != 0 {
				t.Errorf("round %d: Changes from the last checkpoint with nothing changed delivered %d records", round, n)
			}
		} else {
			wantExactly(t, fmt.Sprintf("round %d: a full reread", round), r.records(), ids)
		}
		cp = r.lastCheckpoint(cp)
	}
}

func testResumeAfterUpdate(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, fields := insert(t, s, "a", 2*h.BatchSize+1)
	cp := changes(t, src, "", 0).lastCheckpoint("")

	target := ids[1]
	s.Update(t, map[string]any{"name": "Renamed"}, target)
	r := changes(t, src, cp, 0)
	checkBatches(t, h, r, false)
	if h.Type.Incremental {
		wantExactly(t, "Changes after one update", r.records(), []string{target})
	} else {
		wantExactly(t, "a full reread after one update", r.records(), ids)
	}
	if rec, ok := byID(t, r.records(), true)[target]; ok {
		wantFields(t, h, rec, map[string]any{"name": "Renamed", "email": fields[target]["email"], "phone": fields[target]["phone"]})
	}

	if h.Type.Incremental {
		r = changes(t, src, r.lastCheckpoint(cp), 0)
		if n := len(r.records()); n != 0 {
			t.Errorf("Changes after the update was read delivered %d records again", n)
		}
	}
}

// crashEverywhere reads from checkpoint, stopping after batch k for every
// k of a full read, resumes from batch k's checkpoint, and checks that
// the union covers want (exactly once for incremental sources). It
// returns the records of the full read.
func crashEverywhere(t *testing.T, h Harness, src connector.Source, checkpoint string, want []string) []connector.Record {
	t.Helper()
	full := changes(t, src, checkpoint, 0)
	checkBatches(t, h, full, false)
	if len(full.batches) < 2 {
		t.Fatalf("the read took %d batches; the check needs several", len(full.batches))
	}
	for k := 1; k <= len(full.batches); k++ {
		before := changes(t, src, checkpoint, k)
		if !errors.Is(before.err, errStop) {
			t.Fatalf("stop after batch %d: the read returned %v, not the batch function's error", k, before.err)
		}
		resumed := changes(t, src, before.lastCheckpoint(checkpoint), 0)
		union := append(before.records(), resumed.records()...)
		what := fmt.Sprintf("crash after batch %d of %d, then resume", k, len(full.batches))
		if h.Type.Incremental {
			wantExactly(t, what, union, want)
		} else {
			wantCovered(t, what, union, want)
		}
	}
	return full.records()
}

func testCrashAfterEveryBatch(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	first, _ := insert(t, s, "first", 1)
	group := insertGroup(t, s, "group", 3*h.BatchSize+2)
	last, _ := insert(t, s, "last", 1)
	all := append(append(append([]string(nil), first...), group...), last...)

	recs := crashEverywhere(t, h, src, "", all)
	wantExactly(t, "the uninterrupted read", recs, all)
}

func testCrashInSharedUpdate(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, _ := insert(t, s, "a", 3*h.BatchSize)
	cp := changes(t, src, "", 0).lastCheckpoint("")

	updated := ids[1 : len(ids)-1]
	s.Update(t, map[string]any{"phone": "+15550009999"}, updated...)
	want := updated
	if !h.Type.Incremental {
		want = ids
	}
	recs := crashEverywhere(t, h, src, cp, want)
	for _, rec := range recs {
		if rec.ID != ids[0] && rec.ID != ids[len(ids)-1] {
			wantFields(t, h, rec, map[string]any{"phone": "+15550009999"})
		}
	}
}

func testOneBatchPerRun(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, _ := insert(t, s, "a", 2)
	ids = append(ids, insertGroup(t, s, "group", 2*h.BatchSize+1)...)
	more, _ := insert(t, s, "b", h.BatchSize+1)
	ids = append(ids, more...)

	var got []connector.Record
	cp := ""
	for run := 0; ; run++ {
		if run > len(ids) {
			t.Fatalf("still reading after %d runs of one batch", run)
		}
		r := changes(t, src, cp, 1)
		if len(r.batches) == 0 {
			break
		}
		got = append(got, r.records()...)
		cp = r.lastCheckpoint(cp)
	}
	wantExactly(t, "runs of one batch each", got, ids)
}

func testSnapshot(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, fields := insert(t, s, "a", 2*h.BatchSize+1)
	s.Delete(t, ids[0])
	s.Delete(t, ids[h.BatchSize])

	r := snapshot(t, src)
	checkBatches(t, h, r, true)
	wantExactly(t, "Snapshot", r.records(), without(ids, ids[0], ids[h.BatchSize]))
	for _, rec := range r.records() {
		if rec.Deleted {
			t.Errorf("snapshot record %s is marked deleted", rec.ID)
		}
		wantFields(t, h, rec, fields[rec.ID])
	}
}

func testSoftDeleteChanges(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, _ := insert(t, s, "a", 3)
	cp := changes(t, src, "", 0).lastCheckpoint("")

	s.Delete(t, ids[1])
	r := changes(t, src, cp, 0)
	wantExactly(t, "Changes after a deletion", r.records(), ids[1:2])
	if rec, ok := byID(t, r.records(), true)[ids[1]]; ok && !rec.Deleted {
		t.Errorf("record %s deleted at the source is not marked Deleted", rec.ID)
	}
}

func testDeleteFullRead(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	ids, _ := insert(t, s, "a", 3)
	cp := changes(t, src, "", 0).lastCheckpoint("")

	s.Delete(t, ids[1])
	r := changes(t, src, cp, 0)
	wantExactly(t, "a full reread after a deletion", r.records(), without(ids, ids[1]))
}

// reads are the two read methods, for checks that hold for both.
var reads = []struct {
	name string
	call func(ctx context.Context, src connector.Source, fn connector.BatchFunc) error
}{
	{"Changes", func(ctx context.Context, src connector.Source, fn connector.BatchFunc) error {
		return src.Changes(ctx, "", fn)
	}},
	{"Snapshot", func(ctx context.Context, src connector.Source, fn connector.BatchFunc) error {
		return src.Snapshot(ctx, fn)
	}},
}

func testCancelBefore(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	insert(t, s, "a", 1)
	for _, rd := range reads {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls := 0
		err := rd.call(ctx, src, func(context.Context, connector.Batch) error { calls++; return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context returned %v, want context.Canceled", rd.name, err)
		}
		if calls != 0 {
			t.Errorf("%s with a cancelled context delivered %d batches", rd.name, calls)
		}
	}
}

func testCancelDuring(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	insert(t, s, "a", 2*h.BatchSize+1)
	for _, rd := range reads {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := rd.call(ctx, src, func(context.Context, connector.Batch) error {
			calls++
			cancel()
			return nil
		})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s cancelled after the first batch returned %v, want context.Canceled", rd.name, err)
		}
		if calls != 1 {
			t.Errorf("%s cancelled after the first batch delivered %d batches", rd.name, calls)
		}
	}
}

func testBatchFuncError(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	insert(t, s, "a", 2*h.BatchSize+1)
	for _, rd := range reads {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		calls := 0
		err := rd.call(ctx, src, func(context.Context, connector.Batch) error { calls++; return errStop })
		cancel()
		if !errors.Is(err, errStop) {
			t.Errorf("%s returned %v, want the batch function's error wrapped", rd.name, err)
		}
		if calls != 1 {
			t.Errorf("%s went on after the batch function failed: %d batches", rd.name, calls)
		}
	}
}

func testWritableFlag(t *testing.T, h Harness) {
	src := open(t, h.New(t))
	_, isWriter := src.(connector.Writer)
	if isWriter != h.Type.Writable {
		t.Errorf("source implements Writer: %v, but Type.Writable is %v", isWriter, h.Type.Writable)
	}
}

func testCapabilities(t *testing.T, h Harness) {
	src := open(t, h.New(t))
	if diff := h.Type.CheckCapabilities(src); diff != "" {
		t.Errorf("connector type %q: %s (declare them in the Type's Capabilities where it registers)", h.Type.Name, diff)
	}
}

func testFieldLister(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	insert(t, s, "a", 1)
	fl, ok := src.(connector.FieldLister)
	if !ok {
		t.Skip("source is not a FieldLister")
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	names, err := fl.Fields(ctx)
	if err != nil {
		t.Fatalf("Fields: %v", err)
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		if have[n] {
			t.Errorf("Fields names %q twice", n)
		}
		have[n] = true
	}
	for _, f := range Fields {
		if f = h.field(f); !have[f] {
			t.Errorf("Fields %v lacks %q", names, f)
		}
	}
}
