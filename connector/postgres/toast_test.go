package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// toastNote is a notes value stored out of line (STORAGE EXTERNAL, over
// the 2 kB TOAST threshold), which pgoutput sends as 'u' (unchanged)
// in an update that leaves it alone.
func toastNote(id int) string { return fmt.Sprintf("note of %d: %s", id, strings.Repeat("x", 4000)) }

// TestUnchangedToastedValueIsNeverEmptied updates five rows in one
// transaction (leaving their TOASTed notes alone) and deletes four of
// them in a later one, before the pass reads the stream; the batch size
// cuts the update into several batches. No record may carry an empty
// notes it did not read: with REPLICA IDENTITY FULL the value comes from
// the old row; with the default identity, from the table when the row
// is still there, and otherwise the field is listed as Unread (left
// untouched by the reconciler), never mapped as empty.
func TestUnchangedToastedValueIsNeverEmptied(t *testing.T) {
	for _, tc := range []struct {
		name, identity string
	}{
		{"replica identity default", "DEFAULT"},
		{"replica identity full", "FULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, s := logicalTable(t, func(s *postgres.Settings) { s.BatchSize = 2 })
			tbl := s.Table
			pgtest.Exec(t, pool, `ALTER TABLE `+tbl+` ADD COLUMN notes text`)
			pgtest.Exec(t, pool, `ALTER TABLE `+tbl+` ALTER COLUMN notes SET STORAGE EXTERNAL`)
			pgtest.Exec(t, pool, `ALTER TABLE `+tbl+` REPLICA IDENTITY `+tc.identity)
			for id := 1; id <= 5; id++ {
				pgtest.Exec(t, pool, `INSERT INTO `+tbl+` (id, name, notes) VALUES ($1, $2, $3)`, id, fmt.Sprintf("n%d", id), toastNote(id))
			}
			var external bool
			queryRow(t, pool, `SELECT pg_relation_size(reltoastrelid) > 0 FROM pg_class WHERE oid = $1::regclass`, []any{&external}, tbl)
			if !external {
				t.Fatal("notes is stored inline, not TOASTed out of line: the test proves nothing")
			}
			src := openSource(t, s)
			_, cp := pass(t, src, "")

			pgtest.Exec(t, pool, `UPDATE `+tbl+` SET name = name || ' edited'`)
			pgtest.Exec(t, pool, `DELETE FROM `+tbl+` WHERE id <= 4`)
			got, _ := pass(t, src, cp)
			if len(got) < 3 {
				t.Fatalf("the stream came in %d batches, want the update cut by batchSize 2", len(got))
			}
			var edited, deleted int
			for _, r := range got.records() {
				if r.Deleted {
					deleted++
					continue
				}
				edited++
				if !strings.HasSuffix(fmt.Sprint(r.Fields["name"]), " edited") {
					t.Errorf("record %s: name %v, want the edit", r.ID, r.Fields["name"])
				}
				notes, read := r.Fields["notes"]
				unread := slices.Contains(r.Unread, "notes")
				switch {
				case read && unread:
					t.Errorf("record %s: notes both read and unread", r.ID)
				case !read && !unread:
					t.Errorf("record %s: notes neither read nor listed unread: it would be mapped as empty", r.ID)
				case read && notes != toastNote(mustAtoi(t, r.ID)):
					t.Errorf("record %s: notes read as %.40q..., want the stored value", r.ID, notes)
				case unread && (tc.identity == "FULL" || r.ID == "5"):
					t.Errorf("record %s: notes unread, but %s", r.ID, map[bool]string{true: "the old row holds it (FULL)", false: "the row is still there"}[tc.identity == "FULL"])
				}
			}
			if edited != 5 || deleted != 4 {
				t.Errorf("read %d edited and %d deleted rows, want 5 and 4 (%v)", edited, deleted, describe(got.records()))
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}
