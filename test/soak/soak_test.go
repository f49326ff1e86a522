//go:build soak

package soak

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace"
)

var (
	duration  = flag.Duration("soak.duration", 2*time.Minute, "how long the edits go on, per mode")
	modes     = flag.String("soak.modes", "logical,poll", "the table's changes modes to soak, comma-separated (logical, poll: PostgreSQL; binlog: MariaDB)")
	rate      = flag.Float64("soak.rate", 12, "edits per second, both sides together")
	apiRate   = flag.Float64("soak.api-rate", workspace.DefaultRateLimit, "the workspace's rate limit, requests per second (syncd is configured to match)")
	faults    = flag.Float64("soak.faults", 0.2, "share of workspace API calls that fail (429, 500, latency, lost answer)")
	killEvery = flag.Duration("soak.kill-every", 0, "mean time between SIGKILLs of syncd (default: 5m, or a third of -soak.duration when shorter than 15m; negative: none)")
	workers   = flag.Int("soak.workers", 2, "drivers per side working at once, on different contacts (one alone falls short of -soak.rate on a loaded machine)")
	rows      = flag.Int("soak.rows", 150, "rows of the table at the start")
	active    = flag.Int("soak.active", 150, "contacts being edited at a time: each takes 3 to 12 edits, then is left alone and checked at the end")
	seed      = flag.Int64("soak.seed", 1, "seed of the edits, faults and kills")
	race      = flag.Duration("soak.race", 3*time.Second, "edits of both sides within this window are a true race")
	out       = flag.String("soak.out", "", "folder of the reports, edit logs and syncd output (default: a new folder under $TMPDIR)")
	show      = flag.Int("soak.show", 10, "findings detailed with their timeline in the report")
	quiet     = flag.Duration("soak.quiet", 15*time.Second, "the window after the drain in which any write is an idle write")
	logLevel  = flag.String("soak.log-level", "warn", "syncd's log level (its output goes to syncd.log)")
	parallel  = flag.Bool("soak.parallel", false, "soak the modes at the same time")
)

// TestSoak soaks syncd in each of -soak.modes; see the package comment.
func TestSoak(t *testing.T) {
	dir, err := os.MkdirTemp("", "syncd-soak-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, err := e2e.BuildSyncd(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := *out
	if base == "" {
		if base, err = os.MkdirTemp("", "syncd-soak-"); err != nil {
			t.Fatal(err)
		}
	}
	kill := *killEvery
	switch {
	case kill == 0 && *duration < 15*time.Minute:
		kill = *duration / 3
	case kill == 0:
		kill = 5 * time.Minute
	case kill < 0:
		kill = 0
	}
	for _, mode := range strings.Split(*modes, ",") {
		mode = strings.TrimSpace(mode)
		if mode != "logical" && mode != "poll" && mode != "binlog" {
			t.Fatalf("-soak.modes: unknown mode %q (logical, poll: PostgreSQL; binlog: MariaDB)", mode)
		}
		t.Run(mode, func(t *testing.T) {
			if *parallel {
				t.Parallel()
			}
			s := Run(t, Options{
				Mode: mode, Binary: bin, Duration: *duration, Rate: *rate, Workers: *workers, Rows: *rows, Active: *active,
				APIRate: *apiRate, Faults: *faults, FaultLatency: time.Second, KillEvery: kill, Race: *race,
				Drain: 10 * time.Minute, Settle: 5 * time.Second, GiveUp: 150 * time.Second, Quiet: *quiet, Seed: *seed,
				Out: filepath.Join(base, fmt.Sprintf("%s-seed%d", mode, *seed)), Show: *show, LogLevel: *logLevel,
			})
			if s.Failed() {
				t.Errorf("soak %s failed: %d lost edits (%d more journaled, outside the race window), %d edits after a delete dropped without a journal entry, %d disagreements, %d duplicates, %d idle workspace and %d idle table writes (report above)",
					mode, s.Result.Lost, s.Result.Journaled, s.Result.AfterDelete.Dropped, len(s.Agreement)+s.Result.Disagree, len(s.Result.Duplicates), s.IdleWS, s.IdleTable)
			}
		})
	}
}
