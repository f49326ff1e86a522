package crash

import (
	"testing"

	"github.com/syncd-io/syncd/test/e2e"
)

// TestKillWhileStreamingBinlog is TestKillWhileStreaming on MariaDB's
// binlog (changes: binlog): SIGKILLs while syncd streams transactions of
// 300 edits, inserts and hard deletes; after one complete run one
// contact per live row with every field equal, none for a deleted row (0
// duplicates, 0 lost), and an unchanged rerun writes nothing.
func TestKillWhileStreamingBinlog(t *testing.T) {
	w := newForwardWorldIn(t, e2e.MySQL, 1200, 400, map[string]any{"changes": "binlog"})
	w.killWhileStreaming(t)
}

// TestKillDuringForwardRunsBinlog is TestKillDuringForwardRuns on
// MariaDB's binlog: SIGKILLs during the first sync (the consistent
// snapshot whose position the stream starts from) and during the
// streaming reruns; after one complete run, one contact per row, every
// field equal.
func TestKillDuringForwardRunsBinlog(t *testing.T) {
	newForwardWorldIn(t, e2e.MySQL, 1200, 400, map[string]any{"changes": "binlog"}).killDuringRuns(t)
}
