package daemon_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// secondDaemon opens another daemon on e's table and workspace, with a
// state file of its own and the given admin and webhook addresses.
func (e *pgEnv) secondDaemon(adminAddr, hookAddr string) *daemon.Daemon {
	e.t.Helper()
	cfg := *e.cfg
	cfg.Admin = config.AdminConfig{Listen: adminAddr}
	cfg.Webhooks.Listen = hookAddr
	cfg.State.Path = filepath.Join(e.t.TempDir(), "second.db")
	d, err := daemon.New(context.Background(), &cfg, daemon.Options{Log: quiet()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = d.Close() })
	return d
}

// Run starts every part (the admin API answers, the receiver listens),
// and one cancel stops them all within the shutdown budget: Run returns
// nil and both addresses are free again.
func TestPGRunStopsEveryPartWithOneCancel(t *testing.T) {
	e := newPGEnv(t, 3, emulator.Options{})
	adminAddr, hookAddr := freeAddr(t), freeAddr(t)
	d := e.secondDaemon(adminAddr, hookAddr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://" + adminAddr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admin API did not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res, err := http.Post("http://"+hookAddr+e.cfg.Webhooks.Path, "application/json", strings.NewReader("{}")); err != nil {
		t.Fatalf("the receiver does not listen: %v", err)
	} else {
		res.Body.Close()
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v after the cancel, want nil", err)
		}
	case <-time.After(daemon.ShutdownBudget + 2*time.Second):
		t.Fatalf("Run still running %v after the cancel", daemon.ShutdownBudget+2*time.Second)
	}
	t.Logf("stopped %v after the cancel", time.Since(start).Round(time.Millisecond))
	for _, addr := range []string{adminAddr, hookAddr} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s still taken after Run returned: %v", addr, err)
			continue
		}
		ln.Close()
	}
}

// A start-up that fails half-way (the receiver's address is taken)
// returns the error and releases what it had opened (the admin API's
// address), starting nothing.
func TestPGStartFailureReleasesWhatItOpened(t *testing.T) {
	e := newPGEnv(t, 0, emulator.Options{})
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	adminAddr := freeAddr(t)
	d := e.secondDaemon(adminAddr, taken.Addr().String())
	r, err := d.Start(context.Background(), daemon.AllParts)
	if err == nil || !strings.Contains(err.Error(), "webhooks.listen") {
		r.Stop()
		t.Fatalf("Start = %v, want the webhooks.listen error", err)
	}
	ln, err := net.Listen("tcp", adminAddr)
	if err != nil {
		t.Fatalf("the admin address is still taken after the failed start: %v", err)
	}
	ln.Close()
}
