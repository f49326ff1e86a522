package crash

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
)

var (
	seed  = flag.Int64("seed", 1, "seed of the kill moments and edits")
	kills = flag.Int("kills", 4, "kills per scenario")
)

// syncdBinary is syncd, built once by TestMain.
var syncdBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "syncd-crash-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if syncdBinary, err = e2e.BuildSyncd(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running syncd.
type proc = e2e.Proc

// start runs syncd with args.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return e2e.Start(t, syncdBinary, args...)
}

// runOK runs syncd to the end and fails the test unless it succeeds.
func runOK(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	p := start(t, args...)
	if err := p.Wait(t, timeout); err != nil {
		t.Fatalf("syncd %v: %v\n%s", args, err, p.Out.String())
	}
	return p.Out.String()
}

// killAtRandom starts syncd with args and SIGKILLs it after a random
// moment in [min, max); it reports whether the kill hit a running
// process.
func killAtRandom(t *testing.T, rng *rand.Rand, lo, hi time.Duration, args ...string) bool {
	t.Helper()
	p := start(t, args...)
	at := lo + time.Duration(rng.Int63n(int64(hi-lo)))
	select {
	case <-p.Done():
		if p.Err() != nil {
			t.Fatalf("syncd %v failed before its kill: %v\n%s", args, p.Err(), p.Out.String())
		}
		return false
	case <-time.After(at):
	}
	killed := p.Kill()
	t.Logf("killed syncd %v after %s (running: %v)", args[0], at.Round(time.Millisecond), killed)
	return killed
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string { return e2e.FreeAddr(t) }

// waitListening waits until something accepts connections at addr.
func waitListening(t *testing.T, ctx context.Context, p *proc, addr string) {
	t.Helper()
	e2e.WaitListening(t, ctx, p, addr)
}
