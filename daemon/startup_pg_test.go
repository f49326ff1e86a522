package daemon_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestPGReceiverServesDuringStartUpCatchUp: the receiver answers the
// deliveries that come while the start-up catch-up lists the workspace
// (seconds, half a minute under a throttled API), so that each app edit
// made meanwhile reaches the inbox as it happens, with its own time.
// Bound but not served until start-up ended, its deliveries timed out
// and came again only after the catch-up listing had settled them by a
// later version's time (issue 35: the poll soak's journaled losses after
// a restart).
func TestPGReceiverServesDuringStartUpCatchUp(t *testing.T) {
	e := newPGEnv(t, 3, emulator.Options{})
	c := e.contactOf(2)
	secret := e.secret
	e.close()

	// The workspace as syncd sees it: its contact listing (the catch-up)
	// held until released.
	target, err := url.Parse(e.emu.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	listing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/contacts" {
			once.Do(func() { close(listing) })
			<-release
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	cfg := *e.cfg
	cfg.Workspace.BaseURL = gate.URL
	cfg.Webhooks.Listen = freeAddr(t)
	d, err := daemon.New(context.Background(), &cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *daemon.Running, 1)
	go func() {
		rev, err := d.StartReverse(context.Background())
		if err != nil {
			t.Error(err)
		}
		started <- rev
	}()
	released := false
	defer func() {
		if !released {
			close(release)
		}
		if rev := <-started; rev != nil {
			rev.Stop()
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-listing:
	case <-time.After(30 * time.Second):
		t.Fatal("the start-up catch-up did not list the workspace")
	}

	c.DefaultFields.LastName = ptr("DuringStartUp")
	c.UpdatedAt = time.Now().UTC()
	h, body := signedEvent(t, secret, "msg_startup", c)
	req, _ := http.NewRequest(http.MethodPost, "http://"+cfg.Webhooks.Listen+cfg.Webhooks.Path, bytes.NewReader(body))
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("delivery during the start-up catch-up: %v (the receiver must serve from the start)", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("delivery during the start-up catch-up answered %d, want 200", resp.StatusCode)
	}
	if n, err := d.Store().Inbox.Count(); err != nil || n != 1 {
		t.Fatalf("inbox holds %d events (%v), want the delivered one", n, err)
	}
	close(release)
	released = true
	deadline := time.Now().Add(10 * time.Second)
	for e.column(2, "last_name") != "DuringStartUp" {
		if time.Now().After(deadline) {
			t.Fatalf("row's last_name %q, want the edit delivered during start-up", e.column(2, "last_name"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
