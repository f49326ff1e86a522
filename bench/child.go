package bench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/syncd-io/syncd/internal/capture"
)

// child is a syncd process started by a benchmark, its memory sampled
// while it runs.
type child struct {
	cmd      *exec.Cmd
	out      *capture.Buffer
	start    time.Time
	stop     chan struct{}
	peakAnon chan int64
	done     chan struct{}
	waitErr  error
	resOnce  sync.Once
	res      Result
}

// startChild starts binary with args, its output captured.
func startChild(ctx context.Context, binary string, args ...string) (*child, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	out := &capture.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	c := &child{cmd: cmd, out: out, stop: make(chan struct{}), peakAnon: make(chan int64, 1), done: make(chan struct{})}
	c.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.peakAnon <- sampleAnon(cmd.Process.Pid, c.stop) }()
	go func() {
		c.waitErr = cmd.Wait()
		close(c.stop)
		close(c.done)
	}()
	return c, nil
}

// waitFor waits until the child's output contains s.
func (c *child) waitFor(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !strings.Contains(c.out.String(), s) {
		select {
		case <-c.done:
			return fmt.Errorf("syncd exited before %q: %v\n%s", s, c.waitErr, c.out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q from syncd within %s\n%s", s, timeout, c.out.String())
		}
	}
	return nil
}

// terminate sends SIGTERM (the daemon finishes its batch and exits) and
// waits.
func (c *child) terminate(timeout time.Duration) (Result, error) {
	select {
	case <-c.done:
		return c.result(), c.err()
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return c.result(), fmt.Errorf("syncd did not exit within %s of SIGTERM\n%s", timeout, c.out.String())
	}
	return c.result(), c.err()
}

// wait waits for the child to exit by itself.
func (c *child) wait() (Result, error) {
	<-c.done
	return c.result(), c.err()
}

func (c *child) err() error {
	if c.waitErr != nil {
		var ee *exec.ExitError
		if errors.As(c.waitErr, &ee) && ee.ProcessState != nil && !ee.Exited() {
			return nil // stopped by our signal
		}
		return fmt.Errorf("syncd %s: %w\n%s", strings.Join(c.cmd.Args[1:], " "), c.waitErr, c.out.String())
	}
	return nil
}

// result is the child's wall time, CPU and memory, once it exited.
func (c *child) result() Result {
	c.resOnce.Do(func() {
		c.res = Result{Wall: time.Since(c.start), Output: c.out.String(), PeakAnon: <-c.peakAnon}
		if st := c.cmd.ProcessState; st != nil {
			if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
				c.res.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				c.res.PeakRSS = ru.Maxrss * 1024 // Linux reports KiB
			}
		}
	})
	return c.res
}
