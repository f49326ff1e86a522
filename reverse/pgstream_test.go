package reverse

import (
	"context"
	"testing"

	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
	"github.com/syncd-io/syncd/workspace"
)

// TestLogicalStreamOwnWriteBacksWriteNothing (issue 35): the app edits a
// contact twice, each edit written back to the row before the next
// forward pass; the logical stream then hands the pass both versions of
// the row, in two batches. The first, older than what the link agrees,
// was taken for a change of the row: the pass patched the app's older
// value over its newer one, then the newer back (the logical soak's
// writes after the edits stopped). The pass now reads such a copy again
// and writes nothing.
func TestLogicalStreamOwnWriteBacksWriteNothing(t *testing.T) {
	w := newPGWorldWith(t, Options{}, func(s *postgres.Settings) {
		s.Changes, s.BatchSize = postgres.ChangesLogical, 1
		s.Slot = pgtest.Slot(t, pgtest.Connect(t))
	})
	if sum := w.crm.forward(); sum.Updated != 0 {
		t.Fatalf("pass after the first sync: %v", sum)
	}
	for _, name := range []string{"App1", "App2"} {
		w.edit(t, 1, workspace.DefaultFieldsPatch{FirstName: workspace.Some(name)})
		w.rounds(t, 1)
	}
	if got := w.column(t, 1, "first_name"); got != "App2" {
		t.Fatalf("row 1 first_name = %q after the write-backs, want App2", got)
	}
	patches := w.e.emu.Stats().Requests["PATCH /v1/contacts/{id}"]
	if sum := w.crm.forward(); sum.Updated != 0 || sum.Created != 0 {
		t.Errorf("pass after two write-backs wrote: %v", sum)
	}
	if got := w.e.emu.Stats().Requests["PATCH /v1/contacts/{id}"] - patches; got != 0 {
		t.Errorf("the workspace saw %d PATCHes, want none", got)
	}
	l, _, _ := w.e.store.Links.Get("pg", "1")
	c, err := w.e.ws.GetContact(context.Background(), l.ContactID)
	if err != nil || *c.DefaultFields.FirstName != "App2" {
		t.Errorf("contact %+v, %v: want first name App2", c.DefaultFields, err)
	}
}
