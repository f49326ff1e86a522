package connectortest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// testStagedCreates checks Type.StagesCreates: every create tells its id
// to the context's StageFunc before it commits, alone or among other
// changes; the ids told are those the results give; and a StageFunc's
// error stops the commit, so that no record of the call exists.
func testStagedCreates(t *testing.T, h Harness) {
	s := h.New(t)
	src := open(t, s)
	w := src.(connector.Writer)
	for _, n := range []int{1, 3} {
		recs := newRecords("s", n)
		changes := make([]connector.Change, n)
		for i := range recs {
			changes[i] = connector.Change{Op: connector.OpCreate, Fields: h.named(recs[i])}
		}

		// Refused: nothing is committed.
		var told []string
		refuse := connector.WithStage(context.Background(), func(ids map[int]string) error {
			told = append(told, slices.Collect(maps.Values(ids))...)
			return errors.New("state unwritable")
		})
		res, err := w.Write(refuse, changes)
		if err == nil {
			for i, r := range res {
				if r.Err == nil {
					t.Errorf("%d creates, create %d applied although its stage failed", n, i)
				}
			}
		}
		if len(told) == 0 {
			t.Fatalf("%d creates: the stage function was never called", n)
		}
		checkLive(t, h, src, map[string]map[string]any{})

		// Staged, then committed: the ids told are the results'.
		staged := map[int]string{}
		accept := connector.WithStage(context.Background(), func(ids map[int]string) error {
			maps.Copy(staged, ids)
			return nil
		})
		res, err = w.Write(accept, changes)
		if err != nil {
			t.Fatalf("%d creates: Write: %v", n, err)
		}
		want := map[string]map[string]any{}
		for i := range res {
			wantApplied(t, res, i, "staged create")
			if staged[i] != res[i].ID {
				t.Errorf("%d creates, create %d: staged id %q, result %q", n, i, staged[i], res[i].ID)
			}
			want[res[i].ID] = recs[i]
		}
		checkLive(t, h, src, want)
		dels := make([]connector.Change, n)
		for i := range res {
			dels[i] = connector.Change{Op: connector.OpDelete, ID: res[i].ID}
		}
		for i, r := range write(t, w, dels...) {
			wantApplied(t, []connector.WriteResult{r}, 0, "delete "+res[i].ID)
		}
	}
}
