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
	"github.com/syncd-io/syncd/internal/configfile"
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

	d, gate, hook := startHeld(t, e, daemon.ReversePart)
	c.DefaultFields.LastName = ptr("DuringStartUp")
	c.UpdatedAt = time.Now().UTC()
	h, body := signedEvent(t, secret, "msg_startup", c)
	req, _ := http.NewRequest(http.MethodPost, hook, bytes.NewReader(body))
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
	gate.release()
	deadline := time.Now().Add(10 * time.Second)
	for e.column(2, "last_name") != "DuringStartUp" {
		if time.Now().After(deadline) {
			t.Fatalf("row's last_name %q, want the edit delivered during start-up", e.column(2, "last_name"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listingGate is the workspace as syncd sees it: its contact listing
// (the start-up catch-up) held until released.
type listingGate struct {
	url     string
	listing chan struct{} // closed when the listing came
	hold    chan struct{} // closed when it may go through
	once    sync.Once
}

func holdListing(t *testing.T, emuURL string) *listingGate {
	t.Helper()
	target, err := url.Parse(emuURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	g := &listingGate{listing: make(chan struct{}), hold: make(chan struct{})}
	var came sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/contacts" {
			came.Do(func() { close(g.listing) })
			<-g.hold
		}
		proxy.ServeHTTP(w, r)
	}))
	g.url = srv.URL
	t.Cleanup(func() {
		g.release()
		srv.Close()
	})
	return g
}

// release lets the listing through; again is a no-op.
func (g *listingGate) release() { g.once.Do(func() { close(g.hold) }) }

// startHeld starts e's configuration again as a new daemon (e closed)
// with the parts given, its workspace's listing held (listingGate), and
// returns once the start-up catch-up lists the workspace, with the URL
// its webhook receiver takes deliveries at; the daemon is stopped and
// closed when the test ends.
func startHeld(t *testing.T, e *pgEnv, parts daemon.Parts) (*daemon.Daemon, *listingGate, string) {
	t.Helper()
	gate := holdListing(t, e.emu.URL)
	cfg := *e.cfg
	cfg.Workspace.BaseURL = gate.url
	cfg.Webhooks.Listen = freeAddr(t)
	d, err := daemon.New(context.Background(), &cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan *daemon.Running, 1)
	go func() {
		r, err := d.Start(context.Background(), parts)
		if err != nil {
			t.Error(err)
		}
		started <- r
	}()
	t.Cleanup(func() {
		gate.release()
		if r := <-started; r != nil {
			r.Stop()
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	select {
	case <-gate.listing:
	case <-time.After(30 * time.Second):
		t.Fatal("the start-up catch-up did not list the workspace")
	}
	return d, gate, "http://" + cfg.Webhooks.Listen + cfg.Webhooks.Path
}

// TestPGObserverReadsDuringStartUpCatchUp: the observer of a polled
// table reads it while the start-up catch-up lists the workspace (15 s
// after a restart under a throttled API), so that a row's edit made
// meanwhile keeps its own time before a later edit of another column
// moves the row's updated_at. Started with the forward loops only, it
// read nothing then, and the write-back weighed such rows at their later
// updated_at (issue 35: the poll soak's 3 journaled losses of the
// hour-long run at 468a4df, each in the 10 s after a restart).
func TestPGObserverReadsDuringStartUpCatchUp(t *testing.T) {
	e := newPGEnvWith(t, 3, emulator.Options{}, 500, func(c *configfile.Connector) { c.Schedule = "@every 1s" })
	contact := e.contactOf(2).ID
	e.close()
	d, _, _ := startHeld(t, e, daemon.ReversePart|daemon.ForwardPart)

	var at time.Time
	if err := e.pool.QueryRow(context.Background(), "UPDATE "+e.table+" SET last_name = 'DuringStartUp' WHERE id = 2 RETURNING updated_at").Scan(&at); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		es, err := d.Store().Reverse.RecordEdits("db", contact)
		if err != nil {
			t.Fatal(err)
		}
		if ed, ok := es["lastName"]; ok && ed.Value == "DuringStartUp" {
			if !ed.At.Equal(at) {
				t.Errorf("last name's edit kept at %v, want the row's updated_at %v", ed.At, at)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no edit time kept for the row edited during the start-up catch-up: the observer must read from the start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
