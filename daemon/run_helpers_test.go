package daemon_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/daemon"
)

// startForward starts d's forward part (the connectors' schedules and
// change watchers), stopped at the test's end, and waits until firstPass
// holds.
func startForward(t *testing.T, d *daemon.Daemon, firstPass func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.Wait() })
	waitUntil(t, 20*time.Second, "the first pass", firstPass)
}

// healthPage is d's health page (GET / of the admin server), unescaped.
func healthPage(t *testing.T, d *daemon.Daemon) string {
	t.Helper()
	srv := httptest.NewServer((&admin.Server{Daemon: d, Log: logrus.NewEntry(quiet())}).Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %d, %v", resp.StatusCode, err)
	}
	return html.UnescapeString(string(body))
}
