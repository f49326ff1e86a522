package daemon_test

import (
	"testing"

	"github.com/syncd-io/syncd/daemon"
)

func TestPollMode(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"minutes", "@every 5m", "poll every 5m"},
		{"hours", "@every 1h", "poll every 1h"},
		{"mixed", "@every 1h30m", "poll every 1h30m"},
		{"seconds", "@every 10s", "poll every 10s"},
		{"descriptor", "@hourly", "poll every 1h"},
		{"cron", "*/5 * * * *", "poll on schedule */5 * * * *"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := daemon.PollMode(tc.spec); got != tc.want {
				t.Errorf("PollMode(%q) = %q, want %q", tc.spec, got, tc.want)
			}
		})
	}
}
