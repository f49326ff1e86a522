package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/syncd-io/syncd/config"
)

// TestValidateAndRunRefuseBadSchedules: the schedules that cron parses but
// would run wrongly are refused by validate and by run alike, with the
// reason; run writes nothing.
func TestValidateAndRunRefuseBadSchedules(t *testing.T) {
	tests := []struct {
		name, schedule, reason string
	}{
		{"negative", "@every -5m", "is negative"},
		{"zero", "@every 0s", "is zero"},
		{"below the floor", "@every 1ms", "below the floor of 1s"},
		{"out of range", "*/61 * * * *", "out of range"},
		{"never fires", "0 0 31 2 *", "never fires"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newOpsEnv(t)
			doc, err := os.ReadFile(e.cfg)
			if err != nil || !bytes.Contains(doc, []byte("@every 1h")) {
				t.Fatalf("config %s: %v\n%s", e.cfg, err, doc)
			}
			doc = bytes.Replace(doc, []byte("@every 1h"), []byte(tt.schedule), 1)
			if err := os.WriteFile(e.cfg, doc, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"validate", "run"} {
				args := []string{cmd, "--config", e.cfg}
				if cmd == "run" {
					args = append(args, "--once")
				}
				_, serr, err := e.main(context.Background(), opsToken, args...)
				if err == nil {
					t.Fatalf("%s accepted schedule %q", cmd, tt.schedule)
				}
				var ie *InvalidConfigError
				var ve *config.ValidationError
				if !(errors.As(err, &ie) && ie.Problems == 1) && !(errors.As(err, &ve) && len(ve.Problems) == 1) {
					t.Fatalf("%s: err = %v, want one problem\n%s", cmd, err, serr)
				}
				wantLines(t, cmd+" output", serr+err.Error(), "connectors[crm].schedule", tt.schedule, tt.reason)
			}
			if n := len(e.emu.Contacts()); n != 0 {
				t.Errorf("run wrote %d contacts with a refused schedule", n)
			}
		})
	}
}
