package e2e

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/capture"
)

// BuildSyncd builds the syncd binary into dir and returns its path: the
// suites that kill it (test/crash, test/soak) run the real binary.
func BuildSyncd(dir string) (string, error) {
	bin := filepath.Join(dir, "syncd")
	build := exec.Command("go", "build", "-o", bin, "github.com/syncd-io/syncd/cmd/syncd")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build syncd: %w\n%s", err, out)
	}
	return bin, nil
}

// Proc is a running syncd, its output captured.
type Proc struct {
	Cmd  *exec.Cmd
	Out  *capture.Buffer
	done chan struct{}
	err  error
}

// Start runs binary with args; the process is killed at the test's end
// if still running.
func Start(t testing.TB, binary string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(binary, args...), Out: &capture.Buffer{}, done: make(chan struct{})}
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.Running() {
			_ = p.Cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Running reports whether the process has not ended.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is how the process ended, once Done is closed.
func (p *Proc) Err() error {
	<-p.done
	return p.err
}

// Kill sends SIGKILL and waits; it reports whether the process was still
// running (false: it had finished by itself).
func (p *Proc) Kill() bool {
	if !p.Running() {
		return false
	}
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	return true
}

// Wait waits for the process to end by itself; after timeout it kills it
// and fails the test.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		t.Fatalf("syncd %v still running after %s:\n%s", p.Cmd.Args[1:], timeout, p.Out.String())
		return nil
	}
}

// Terminate sends SIGTERM (syncd finishes what it holds and exits) and
// waits up to timeout, failing the test if it does not end cleanly.
func (p *Proc) Terminate(t testing.TB, timeout time.Duration) {
	t.Helper()
	if !p.Running() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	if err := p.Wait(t, timeout); err != nil {
		t.Errorf("syncd after SIGTERM: %v\n%s", err, p.Out.String())
	}
}

// FreeAddr returns a loopback address no one listens on.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// WaitListening waits until something accepts connections at addr, or
// fails the test if p ends first or after 30 s.
func WaitListening(t testing.TB, ctx context.Context, p *Proc, addr string) {
	t.Helper()
	if err := Listening(ctx, p, addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Listening waits until something accepts connections at addr; it fails
// if p ends first or after timeout.
func Listening(ctx context.Context, p *Proc, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("syncd exited before listening on %s: %v\n%s", addr, p.Err(), p.Out.String())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("syncd not listening on %s after %s:\n%s", addr, timeout, p.Out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
