package crash

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/capture"
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
	syncdBinary = filepath.Join(dir, "syncd")
	build := exec.Command("go", "build", "-o", syncdBinary, "github.com/syncd-io/syncd/cmd/syncd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build syncd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running syncd.
type proc struct {
	cmd  *exec.Cmd
	out  *capture.Buffer
	done chan struct{}
	err  error
}

// start runs syncd with args.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(syncdBinary, args...), out: &capture.Buffer{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits; it reports whether the process was still
// running (false: it had finished by itself).
func (p *proc) kill() bool {
	if !p.running() {
		return false
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return true
}

// wait waits for the process to end by itself.
func (p *proc) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.kill()
		t.Fatalf("syncd %v still running after %s:\n%s", p.cmd.Args[1:], timeout, p.out.String())
		return nil
	}
}

// runOK runs syncd to the end and fails the test unless it succeeds.
func runOK(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	p := start(t, args...)
	if err := p.wait(t, timeout); err != nil {
		t.Fatalf("syncd %v: %v\n%s", args, err, p.out.String())
	}
	return p.out.String()
}

// killAtRandom starts syncd with args and SIGKILLs it after a random
// moment in [min, max); it reports whether the kill hit a running
// process.
func killAtRandom(t *testing.T, rng *rand.Rand, lo, hi time.Duration, args ...string) bool {
	t.Helper()
	p := start(t, args...)
	at := lo + time.Duration(rng.Int63n(int64(hi-lo)))
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("syncd %v failed before its kill: %v\n%s", args, p.err, p.out.String())
		}
		return false
	case <-time.After(at):
	}
	killed := p.kill()
	t.Logf("killed syncd %v after %s (running: %v)", args[0], at.Round(time.Millisecond), killed)
	return killed
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits until something accepts connections at addr.
func waitListening(t *testing.T, ctx context.Context, p *proc, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		if !p.running() {
			t.Fatalf("syncd exited before listening on %s: %v\n%s", addr, p.err, p.out.String())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("syncd not listening on %s after 30s:\n%s", addr, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
