package state

import (
	"bytes"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestCheckpoints(t *testing.T) {
	s, clk := openTest(t)
	steps := []struct {
		name, connector, cp, value string
	}{
		{"main cursor", "hubspot", "", "2026-03-30T12:00:00Z|42"},
		{"named sub-cursor", "hubspot", "archived", "1711800000000"},
		{"sub-cursor named like the main key", "hubspot", "/", "slash"},
		{"other connector", "pg", "", "cursor-pg"},
		{"replace", "pg", "", "cursor-pg-2"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			must(t, s.Checkpoints.Set(st.connector, st.cp, st.value))
			if got, err := s.Checkpoints.Get(st.connector, st.cp); err != nil || got != st.value {
				t.Fatalf("Checkpoint = %q, %v; want %q", got, err, st.value)
			}
		})
	}
	s = reopen(t, s, clk)
	want := map[[2]string]string{
		{"hubspot", ""}: "2026-03-30T12:00:00Z|42", {"hubspot", "archived"}: "1711800000000",
		{"hubspot", "/"}: "slash", {"pg", ""}: "cursor-pg-2", {"pg", "archived"}: "", {"none", ""}: "",
	}
	for k, v := range want {
		if got, err := s.Checkpoints.Get(k[0], k[1]); err != nil || got != v {
			t.Errorf("Checkpoint(%q, %q) after reopen = %q, %v; want %q", k[0], k[1], got, err, v)
		}
	}

	must(t, s.Checkpoints.Set("pg", "", ""))
	if got, _ := s.Checkpoints.Get("pg", ""); got != "" {
		t.Errorf("cleared checkpoint = %q", got)
	}
	must(t, s.Checkpoints.Reset("hubspot"))
	must(t, s.Checkpoints.Reset("hubspot"))
	for _, name := range []string{"", "archived", "/"} {
		if got, _ := s.Checkpoints.Get("hubspot", name); got != "" {
			t.Errorf("checkpoint %q after reset = %q", name, got)
		}
	}
	if err := s.Checkpoints.Set("", "", "x"); err == nil {
		t.Error("checkpoint without connector accepted")
	}
}

func TestCheckpointsListsEveryCursor(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Checkpoints.Set("hubspot", "", "main"))
	must(t, s.Checkpoints.Set("hubspot", "archived", "arch"))
	must(t, s.Checkpoints.Set("hubspot", "/", "slash"))
	must(t, s.Checkpoints.Set("pg", "", "other connector"))
	got, err := s.Checkpoints.All("hubspot")
	must(t, err)
	want := map[string]string{"": "main", "archived": "arch", "/": "slash"}
	if len(got) != len(want) {
		t.Fatalf("Checkpoints = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Checkpoints[%q] = %q, want %q", k, got[k], v)
		}
	}
	if got, err := s.Checkpoints.All("never-ran"); err != nil || len(got) != 0 {
		t.Errorf("Checkpoints of a connector without any = %v, %v; want empty", got, err)
	}
}

// TestDamagedCheckpoint flips a byte of a stored cursor, as the crash
// suite's damaged state files did: the source got "2\xff26-11-27 ..." and
// failed with a query error that did not name the state file (or a flip
// to another digit would skip changes silently). A damaged checkpoint is
// a damaged file, named with how to recover.
func TestDamagedCheckpoint(t *testing.T) {
	tests := []struct {
		name string
		at   func(raw []byte) int
	}{
		{"cursor byte", func([]byte) int { return 1 }},
		{"checksum byte", func(raw []byte) int { return len(raw) - 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t)
			must(t, s.Checkpoints.Set("pg", "", "2026-11-27 07:08:57.519996+00|42"))
			must(t, s.Checkpoints.Set("pg", "archived", "7"))
			must(t, s.db.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketCheckpoints).Bucket([]byte("pg"))
				raw := bytes.Clone(b.Get(checkpointKey("")))
				raw[tt.at(raw)] ^= 0x08
				return b.Put(checkpointKey(""), raw)
			}))
			_, err := s.Checkpoints.Get("pg", "")
			assertCorrupt(t, err, s.Path(), "checksum mismatch")
			_, err = s.Checkpoints.All("pg")
			assertCorrupt(t, err, s.Path(), "checksum mismatch")
			if v, err := s.Checkpoints.Get("pg", "archived"); err != nil || v != "7" {
				t.Fatalf("undamaged checkpoint = %q, %v", v, err)
			}
		})
	}
}
