package soak

import (
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
)

// TestRefreshRetiresKeysDeletedOnBothSides: a key with neither a row nor
// a contact retires, so that deleted keys do not count as active and hold
// back the creates; a key added after the sides were read, or being
// worked on, stays.
func TestRefreshRetiresKeysDeletedOnBothSides(t *testing.T) {
	es := newEntities()
	es.add("gone", 1, "c1", 5)
	es.add("row", 2, "", 5)
	es.add("busy", 3, "c3", 5)
	es.busy[Table+"busy"] = true
	read := time.Now()
	es.add("new", 4, "", 5)
	es.refresh(read, []e2e.Row{{ID: 2, Values: e2e.Values{Email: "row"}}}, nil)
	if got, want := es.active(), 3; got != want {
		t.Errorf("%d active keys (%v), want %d: row, busy and new", got, es.keys, want)
	}
	if es.left["gone"] != 0 {
		t.Errorf("the key deleted on both sides did not retire: %d edits left", es.left["gone"])
	}
}
