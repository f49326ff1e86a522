package reconcile

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// memSource is an incremental, writable source whose Changes reads every
// record ahead (a copy taken when it starts) and hands them out one batch
// per record, calling between after the first batch: a write-back made
// there leaves the later batches holding copies older than the record.
// A write replaces a record's Fields, so copies never share changes.
type memSource struct {
	mu      sync.Mutex
	recs    []connector.Record // by position; ID is the position + 1
	between func()
	gets    int
}

var (
	_ connector.Source = (*memSource)(nil)
	_ connector.Writer = (*memSource)(nil)
	_ connector.Getter = (*memSource)(nil)
)

func (s *memSource) Changes(ctx context.Context, _ string, fn connector.BatchFunc) error {
	s.mu.Lock()
	ahead := slices.Clone(s.recs)
	between := s.between
	s.mu.Unlock()
	for i, r := range ahead {
		if err := fn(ctx, connector.Batch{Records: []connector.Record{r}}); err != nil {
			return err
		}
		if i == 0 && between != nil {
			between()
		}
	}
	return nil
}

func (s *memSource) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return s.Changes(ctx, "", fn)
}

func (s *memSource) Close() error { return nil }

func (s *memSource) Get(_ context.Context, ids []string) ([]connector.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	var out []connector.Record
	for _, id := range ids {
		for _, r := range s.recs {
			if r.ID == id {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func (s *memSource) Write(_ context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]connector.WriteResult, len(changes))
	for i, ch := range changes {
		for j := range s.recs {
			if s.recs[j].ID == ch.ID {
				f := maps.Clone(s.recs[j].Fields)
				maps.Copy(f, ch.Fields)
				s.recs[j].Fields = f
				s.recs[j].UpdatedAt = s.recs[j].UpdatedAt.Add(time.Second)
			}
		}
		out[i] = connector.WriteResult{ID: ch.ID}
	}
	return out, nil
}

// TestGuardedRunReadsAgainRecordsWrittenBack: a write-back made between
// two batches of a run (the guard lets go between batches) changes a
// record the run holds an older copy of. The run reads the record again
// instead of taking its copy for a change: the workspace keeps the edit
// that was written back, and no PATCH carries the old value.
func TestGuardedRunReadsAgainRecordsWrittenBack(t *testing.T) {
	e := newEnv(t, 0, emulator.Options{})
	src := &memSource{}
	for i := 1; i <= 3; i++ {
		r := row(i, "v1")
		src.recs = append(src.recs, connector.Record{ID: r[0], UpdatedAt: time.Unix(int64(1000+i), 0),
			Fields: map[string]any{"id": r[0], "first_name": r[1], "last_name": r[2], "email": r[3], "mobile": r[4], "score": r[5]}})
	}
	m, err := mapping.Compile(testSpec(), "both", nil)
	if err != nil {
		t.Fatal(err)
	}
	guard := &Guard{}
	r, err := New(Options{
		Connector: "crm", Source: testSource, Type: connector.Type{Incremental: true, Writable: true}, Reader: src, Mapper: m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 2, Guard: guard, Backoff: time.Millisecond, Log: quietLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if sum, err := r.Run(ctx); err != nil || sum.Created != 3 {
		t.Fatalf("first run: %v %v", sum, err)
	}
	link, _, err := e.store.Links.Get("crm", "3")
	if err != nil {
		t.Fatal(err)
	}

	// What the reverse applier does for an app edit of contact 3, under
	// the guard: the contact holds the edit, the record is written, the
	// link records the agreed values.
	src.between = func() {
		guard.Lock()
		defer guard.Unlock()
		if _, err := e.ws.UpdateContact(ctx, link.ContactID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited")}}); err != nil {
			t.Error(err)
		}
		if _, err := guard.Writer(src).Write(ctx, []connector.Change{{Op: connector.OpUpdate, ID: "3", Fields: map[string]any{"last_name": "Edited"}}}); err != nil {
			t.Error(err)
		}
		recs, _ := src.Get(ctx, []string{"3"})
		mapped, err := m.ToContact(recs[0])
		if err != nil {
			t.Error(err)
		}
		l := link
		l.Fields = ContactFields(mapped)
		l.WorkspaceHash = mapping.Fields(l.Fields).Hash()
		l.SourceHash = l.WorkspaceHash
		if err := e.store.Links.Put(l); err != nil {
			t.Error(err)
		}
	}
	before := e.emu.Stats()
	sum, err := r.Run(ctx)
	if err != nil || sum.Updated != 0 || sum.Unchanged != 3 {
		t.Fatalf("second run: %v %v, want 3 unchanged", sum, err)
	}
	if _, patches, _ := e.writes(before); patches != 1 {
		t.Errorf("%d PATCHes, want only the app edit's", patches)
	}
	c, err := e.ws.GetContact(ctx, link.ContactID)
	if err != nil {
		t.Fatal(err)
	}
	if got := deref(c.DefaultFields.LastName); got != "Edited" {
		t.Errorf("contact 3 lastName = %q after the run, want the edit written back", got)
	}
	if src.gets < 2 {
		t.Errorf("the run read no record again (%d Get calls)", src.gets-1)
	}
}
