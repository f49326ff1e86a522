package reconcile

import (
	"testing"

	"github.com/syncd-io/syncd/state"
)

// TestStreamedRevisitIsNotWeighedAhead: the write-back asked the pass to
// read row 1 again (state.Revisit) while the pass was behind the stream.
// By the time the pass reads it, the row's name was edited, then the app
// edited the first name, then the row's notes: the row read for the
// revisit has no stream times, and its updated_at is the notes' edit,
// later than the app's. Weighed at it, the row's older name beat the
// app's newer one on both sides (issue 35: the logical hour-long soak at
// 468a4df, a last name 6.3 s older than the app's edit, weighed at a
// first-name edit 1.7 s after it). The name is left to the stream's
// version that made it, and the app's edit wins.
func TestStreamedRevisitIsNotWeighedAhead(t *testing.T) {
	e, contactID := newWeighingStream(t)
	e.nameEditedAroundTheApps(contactID)
	if err := e.store.Reverse.Commit(state.ReverseCommit{Revisit: []state.Revisit{{Connector: "crm", RecordID: "1"}}}); err != nil {
		t.Fatal(err)
	}
	e.run()
	e.appNameWon()
	if rs, err := e.store.Reverse.Revisits("crm"); err != nil || len(rs) != 0 {
		t.Errorf("revisits left %v (%v), want none", rs, err)
	}
}
