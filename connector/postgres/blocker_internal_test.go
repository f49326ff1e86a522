package postgres

import (
	"strings"
	"testing"
)

// TestServerBlocker: what keeps changes: auto from logical replication,
// each reason naming what to change. The wal_level cases cannot be made
// on the test server without restarting it (CI runs it with
// wal_level=logical), so they are checked here; the role and table cases
// also run against the real server in TestLogicalModeChoice.
func TestServerBlocker(t *testing.T) {
	tests := []struct {
		name, walLevel string
		mayReplicate   bool
		key            bool
		identity       string
		want           []string // "" when nothing blocks
	}{
		{"wal_level replica", "replica", true, true, "d", []string{"wal_level is replica", "ALTER SYSTEM SET wal_level = logical", "restart PostgreSQL"}},
		{"wal_level minimal", "minimal", true, true, "d", []string{"wal_level is minimal"}},
		{"wal_level first, whatever else", "replica", false, false, "n", []string{"wal_level is replica"}},
		{"role may not replicate", "logical", false, true, "d", []string{"may not replicate", "ALTER ROLE <role> REPLICATION"}},
		{"no primary key", "logical", true, false, "d", []string{"no primary key", "REPLICA IDENTITY FULL"}},
		{"replica identity nothing", "logical", true, true, "n", []string{"REPLICA IDENTITY NOTHING", "REPLICA IDENTITY DEFAULT"}},
		{"replica identity full without a key", "logical", true, true, "f", nil},
		{"everything allows it", "logical", true, true, "d", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := serverBlocker(`"public"."contacts"`, "id", tc.walLevel, tc.mayReplicate, tc.key, tc.identity)
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("blocker = %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("blocker = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
