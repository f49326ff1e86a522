package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestRunRefusesAStateFileTruncatedToZeroBytes: a state file cut to 0
// bytes is refused by run (and by the commands that open it), naming the
// file and the backup command; nothing is written and the file stays as
// it was, so the operator can restore the backup over it.
func TestRunRefusesAStateFileTruncatedToZeroBytes(t *testing.T) {
	e := newOpsEnv(t)
	e.must("run", "--once", "--config", e.cfg)
	contacts := len(e.emu.Contacts())
	if err := os.Truncate(e.state, 0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--once", "--config", e.cfg},
		{"status", "--config", e.cfg},
		{"deadletters", "list", "--config", e.cfg},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, serr, err := e.main(context.Background(), opsToken, args...)
			if err == nil {
				t.Fatalf("syncd %s over a 0-byte state file succeeded", strings.Join(args, " "))
			}
			wantLines(t, "error", err.Error()+serr, e.state, "0 bytes", "syncd state backup")
			if info, err := os.Stat(e.state); err != nil || info.Size() != 0 {
				t.Errorf("state file after the refusal: %v, %v; want it left at 0 bytes", info, err)
			}
		})
	}
	if n := len(e.emu.Contacts()); n != contacts {
		t.Errorf("workspace holds %d contacts after the refused run, want %d", n, contacts)
	}
}
