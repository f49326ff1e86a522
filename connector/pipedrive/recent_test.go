package pipedrive

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

const hookPassword = "webhook-password-0123456789"

// openHooked opens a connector on srv at the default look-back (5 s),
// with webhooks, on the server's clock.
func openHooked(t *testing.T, srv *pipedriveemu.Server) *Source {
	t.Helper()
	src := connectortest.OpenType(t, TypeName, []string{fieldName}, func(set *Settings) {
		set.APIToken = connector.Secret(srv.Token())
		set.BaseURL = srv.URL
		set.RateLimit = 100000
		set.Webhooks = &Webhooks{URL: "https://syncd.example.com/webhooks/connectors/crm", Password: hookPassword}
	}).(*Source)
	src.now = srv.Now
	return src
}

// names reads from cp and returns the names read, and the last batch's
// checkpoint (cp when none).
func names(t *testing.T, src *Source, cp string) (map[string]bool, string) {
	t.Helper()
	got := map[string]bool{}
	err := src.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			got[r.Fields[fieldName].(string)] = true
		}
		cp = b.Checkpoint
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, cp
}

// window is the persons window of checkpoint cp.
func window(t *testing.T, cp string) windowCursor {
	t.Helper()
	c, err := parseCheckpoint(cp)
	if err != nil {
		t.Fatal(err)
	}
	return c.Persons
}

// deliver sends src one webhook delivery with credentials pass and
// returns the status.
func deliver(src *Source, pass string) int {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/connectors/crm", strings.NewReader(`{"meta":{"action":"change","entity":"person","entity_id":"1"}}`))
	r.SetBasicAuth(DefaultWebhookUser, pass)
	w := httptest.NewRecorder()
	src.Webhook().ServeHTTP(w, r)
	return w.Code
}

// A read window ends lookback (5 s) before the clock. The first read
// after start-up still reads the changes of the look-back before it, and
// so does the read a verified webhook starts, without moving the
// checkpoint; a read with neither leaves them to a later window, and a
// refused delivery starts no such read.
func TestReadRecentAtStartAndAfterWebhook(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	srv.Add(pipedriveemu.Person{Name: "Old Person"})
	srv.Advance(time.Minute)
	_, cp := names(t, openHooked(t, srv), "")

	// Changed 2 s before the restart: inside the look-back.
	srv.Advance(time.Second)
	p := srv.Add(pipedriveemu.Person{Name: "Before Start"})
	srv.Advance(2 * time.Second)
	src := openHooked(t, srv)
	got, next := names(t, src, cp)
	if !got["Before Start"] {
		t.Fatalf("the first read after start-up read %v, want the person changed 2 s before it", got)
	}
	if w0, w1 := window(t, cp), window(t, next); w0 != w1 {
		t.Errorf("the window moved from %+v to %+v: it still ends lookback before the clock", w0, w1)
	}

	// No webhook: the window (ending 5 s back) does not reach the change.
	if err := srv.Edit(p, func(p *pipedriveemu.Person) { p.Name = "After Hook" }); err != nil {
		t.Fatal(err)
	}
	srv.Advance(500 * time.Millisecond)
	if got, _ := names(t, src, next); got["After Hook"] {
		t.Fatalf("a read without webhook read %v: the test would not show the webhook's read", got)
	}
	if st := deliver(src, "guessed-password-000"); st != http.StatusUnauthorized {
		t.Fatalf("a forged delivery answered %d, want 401", st)
	}
	if got, _ := names(t, src, next); got["After Hook"] {
		t.Fatalf("a read after a refused delivery read %v", got)
	}
	if st := deliver(src, hookPassword); st != http.StatusOK {
		t.Fatalf("the delivery answered %d, want 200", st)
	}
	got, after := names(t, src, next)
	if !got["After Hook"] {
		t.Fatalf("the read after the webhook read %v, want the change it announced", got)
	}
	if w0, w1 := window(t, next), window(t, after); w0 != w1 {
		t.Errorf("the window moved from %+v to %+v", w0, w1)
	}
	if got, _ := names(t, src, next); got["After Hook"] {
		t.Errorf("the next read without webhook read %v again", got)
	}
}
