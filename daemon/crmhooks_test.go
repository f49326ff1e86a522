package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	_ "github.com/syncd-io/syncd/connector/pipedrive" // the connector of the pipedrive case
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// crmHook is one CRM whose test server delivers its change webhooks to
// a running daemon, as the vendor documents them.
type crmHook struct {
	// edit changes record i's last name in the CRM, as a user would.
	edit func(i int, lastName string)
	// forged are requests to the hook's URL the daemon must refuse.
	forged map[string]func(url string) *http.Request
	// lagSearch, when set, makes the CRM's search show the changes made
	// from now on this much later (HubSpot's search index).
	lagSearch func(time.Duration)
}

// crmCase starts a CRM test server with n records and returns the
// connector's configuration for hook URL url.
type crmCase struct {
	name  string
	start func(t *testing.T, n int, url string) (configfile.Connector, *crmHook)
}

const hookSecret = "app-client-secret-0123456789"

var crmCases = []crmCase{
	{name: "hubspot", start: func(t *testing.T, n int, url string) (configfile.Connector, *crmHook) {
		srv := hubspotemu.NewServer(hubspotemu.Options{RateLimit: 100}) // Free and Starter: 100 per 10 s, search 5 per second
		t.Cleanup(srv.Close)
		ids := make([]string, n)
		for i := range n {
			ids[i] = srv.Add(map[string]string{"email": fmt.Sprintf("h%d@example.com", i), "firstname": "First", "lastname": "Before"})
		}
		// The target URL as an admin may enter it, with a query string
		// (the signature covers it).
		target := url + "?portal=9&app=7"
		srv.SetWebhooks(&hubspotemu.WebhookTarget{URL: target, ClientSecret: hookSecret, AppID: 7, PortalID: 9, RetryScale: 0.001})
		sign := func(u, ts string, body []byte) string {
			return hubspotemu.SignatureV3(hookSecret, http.MethodPost, u, body, ts)
		}
		body := []byte(`[{"objectId":1,"subscriptionType":"contact.propertyChange","propertyName":"lastname","propertyValue":"Forged"}]`)
		req := func(u, sig, ts string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
			if sig != "" {
				r.Header.Set(hubspot.SignatureHeader, sig)
			}
			r.Header.Set(hubspot.TimestampHeader, ts)
			return r
		}
		now := func(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10) }
		return configfile.Connector{Name: "crm", Type: "hubspot", Schedule: "@every 1h",
				Settings: map[string]any{"token": srv.Token(), "baseURL": srv.URL,
					"webhooks": map[string]any{"clientSecret": hookSecret, "url": target}},
				Mapping: configfile.Mapping{ExternalID: "hs_object_id", Fields: map[string]configfile.Field{
					"firstName": configfile.From("firstname"), "lastName": configfile.From("lastname"), "emails.work": configfile.From("email")}}},
			&crmHook{
				edit: func(i int, v string) {
					if err := srv.Update(ids[i], map[string]string{"lastname": v}); err != nil {
						t.Error(err)
					}
				},
				lagSearch: srv.SetSearchLag,
				forged: map[string]func(string) *http.Request{
					"no signature": func(u string) *http.Request { return req(u, "", now(0)) },
					"wrong secret": func(u string) *http.Request {
						ts := now(0)
						return req(u, hubspotemu.SignatureV3("other", http.MethodPost, u, body, ts), ts)
					},
					"stale (6 minutes)": func(u string) *http.Request { ts := now(-6 * time.Minute); return req(u, sign(u, ts, body), ts) },
					"other body":        func(u string) *http.Request { ts := now(0); return req(u, sign(u, ts, []byte("[]")), ts) },
					"v1 of another secret": func(u string) *http.Request {
						r := req(u, "", now(0))
						r.Header.Set(hubspot.SignatureVersionHeader, "v1")
						r.Header.Set(hubspot.OlderSignatureHeader, hubspotemu.SignatureV1("other", body))
						return r
					},
				},
			}
	}},
	pipedriveCase(time.Minute),
}

// pipedriveCase is the Pipedrive case whose persons were made age before
// the daemon starts.
func pipedriveCase(age time.Duration) crmCase {
	return crmCase{name: "pipedrive", start: func(t *testing.T, n int, url string) (configfile.Connector, *crmHook) {
		srv := pipedriveemu.NewServer(pipedriveemu.Options{WebhookRetryScale: 0.001})
		t.Cleanup(srv.Close)
		ids := make([]string, n)
		for i := range n {
			ids[i] = srv.Add(pipedriveemu.Person{Name: "First Before", UpdateTime: time.Now().Add(-age).Truncate(time.Millisecond), Emails: []pipedriveemu.Item{{Value: fmt.Sprintf("p%d@example.com", i), Primary: true, Label: "work"}}})
		}
		req := func(u, user, pass string) *http.Request {
			r, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader([]byte(`{"meta":{"action":"change","entity":"person","entity_id":"1"},"data":{"id":1,"name":"Forged"}}`)))
			if user != "" {
				r.SetBasicAuth(user, pass)
			}
			return r
		}
		return configfile.Connector{Name: "crm", Type: "pipedrive", Schedule: "@every 1h",
				Settings: map[string]any{"apiToken": srv.Token(), "baseURL": srv.URL,
					"webhooks": map[string]any{"url": url, "password": hookSecret}},
				Mapping: configfile.Mapping{Fields: map[string]configfile.Field{
					"firstName": configfile.From("first_name"), "lastName": configfile.From("last_name"), "emails.work": configfile.From("emails.work")}}},
			&crmHook{
				edit: func(i int, v string) {
					if err := srv.Edit(ids[i], func(p *pipedriveemu.Person) { p.Name = "First " + v }); err != nil {
						t.Error(err)
					}
				},
				forged: map[string]func(string) *http.Request{
					"no credentials": func(u string) *http.Request { return req(u, "", "") },
					"wrong password": func(u string) *http.Request { return req(u, "syncd", "guessed-password-000") },
					"wrong user":     func(u string) *http.Request { return req(u, "admin", hookSecret) },
				},
			}
	}}
}

// hookEnv is a daemon running the forward direction of one CRM
// connector with its change webhooks, on an hourly schedule.
type hookEnv struct {
	emu  *emulator.Server
	d    *daemon.Daemon
	url  string
	hook *crmHook
}

func startHookEnv(t *testing.T, c crmCase, n int) *hookEnv {
	t.Helper()
	emu := emulator.NewServer(emulator.Options{Rate: -1})
	t.Cleanup(emu.Close)
	listen := freeAddr(t)
	url := "http://" + listen + "/webhooks/connectors/crm"
	cc, hook := c.start(t, n, url)
	dir := t.TempDir()
	f := configfile.File{
		Workspace:  configfile.Workspace{BaseURL: emu.URL, APIKey: emulator.DefaultAPIKey, RateLimit: 1000, Burst: 100},
		State:      configfile.State{Path: filepath.Join(dir, "syncd.db")},
		Webhooks:   configfile.Webhooks{Listen: listen, PublicURL: "http://" + listen + "/webhooks", AutoRegister: true},
		Connectors: []configfile.Connector{cc},
	}
	path := filepath.Join(dir, "syncd.yaml")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	r, err := d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = r.Wait() })
	e := &hookEnv{emu: emu, d: d, url: url, hook: hook}
	waitUntil(t, 20*time.Second, "the first pass", func() bool { return e.lastNames("Before") == n })
	waitUntil(t, 5*time.Second, "the first pass to be recorded", func() bool { return len(e.runsSince(time.Time{})) == 1 })
	return e
}

// lastNames counts the contacts whose last name is v.
func (e *hookEnv) lastNames(v string) int {
	n := 0
	for _, c := range e.emu.Contacts() {
		if c.DefaultFields.LastName != nil && *c.DefaultFields.LastName == v {
			n++
		}
	}
	return n
}

// runsSince returns the passes started at or after t.
func (e *hookEnv) runsSince(t time.Time) []time.Time {
	runs, _ := e.d.Store().Runs.List("crm", 1000)
	var out []time.Time
	for _, r := range runs {
		if !r.StartedAt.Before(t) {
			out = append(out, r.StartedAt)
		}
	}
	return out
}

// A change in the CRM reaches the daemon as the vendor's webhook, which
// starts a pass within a second (the schedule is hourly), and the
// change is in the workspace soon after.
func TestCRMWebhookStartsAPass(t *testing.T) {
	for _, c := range crmCases {
		t.Run(c.name, func(t *testing.T) {
			e := startHookEnv(t, c, 5)
			edited := time.Now()
			e.hook.edit(2, "Webhooked")
			waitUntil(t, 5*time.Second, "a pass after the webhook", func() bool { return len(e.runsSince(edited)) > 0 })
			started := e.runsSince(edited)
			first := started[len(started)-1]
			if took := first.Sub(edited); took > time.Second {
				t.Errorf("the pass started %v after the change, want within 1 s", took)
			}
			waitUntil(t, 5*time.Second, "the change in the workspace", func() bool { return e.lastNames("Webhooked") == 1 })
			t.Logf("change -> pass started in %v, contact written in %v", first.Sub(edited), time.Since(edited))

			// What operators see: the mode, and the change's latency.
			st, err := e.d.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := st.Connectors[0].Mode, "webhooks + poll every 1h"; got != want {
				t.Errorf("status mode %q, want %q", got, want)
			}
			count, sum := forwardLatency(t, e.d, "crm")
			if count < 1 || sum/float64(count) > 60 {
				t.Errorf("syncd_forward_latency_seconds{connector=crm}: %d observations, sum %.3fs; want the edit's latency (at most seconds)", count, sum)
			}
		})
	}
}

// forwardLatency returns the count and sum of the connector's
// syncd_forward_latency_seconds.
func forwardLatency(t *testing.T, d *daemon.Daemon, name string) (uint64, float64) {
	t.Helper()
	mfs, err := d.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "syncd_forward_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "connector" && l.GetValue() == name {
					return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0, 0
}

// A burst of 500 changes (500 webhook events) makes a few passes, not
// one each, and every change arrives: one pass at once, one a second
// later for the rest of the burst (deliveries start a pass at most about
// once a second), and the trailing one once the burst has settled
// (HubSpot 3 s after its last delivery, Pipedrive lookback + 1.25 s);
// one more when the deliveries spread over more than a second on a
// loaded machine.
func TestCRMWebhookBurstIsAFewPasses(t *testing.T) {
	const n = 500
	for _, c := range crmCases {
		t.Run(c.name, func(t *testing.T) {
			e := startHookEnv(t, c, n)
			began := time.Now()
			for i := range n {
				e.hook.edit(i, "Burst")
			}
			waitUntil(t, 30*time.Second, "every change in the workspace", func() bool { return e.lastNames("Burst") == n })
			written := time.Since(began)
			// Any pass still to come: the trailing one (at most 6.25 s
			// after the last delivery), a retried delivery.
			time.Sleep(8 * time.Second)
			if got := len(e.runsSince(began)); got < 1 || got > 4 {
				t.Errorf("%d passes for a burst of %d changes, want 1 to 4", got, n)
			}
			t.Logf("%d changes -> %d passes, all written in %v", n, len(e.runsSince(began)), written)
		})
	}
}

// A forged or stale webhook is refused with 401 and starts no pass.
func TestCRMWebhookForgedIsRefused(t *testing.T) {
	for _, c := range crmCases {
		t.Run(c.name, func(t *testing.T) {
			e := startHookEnv(t, c, 3)
			for name, forge := range e.hook.forged {
				t.Run(name, func(t *testing.T) {
					sent := time.Now()
					resp, err := http.DefaultClient.Do(forge(e.url))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusUnauthorized {
						t.Errorf("answered %d, want 401", resp.StatusCode)
					}
					time.Sleep(1500 * time.Millisecond)
					if runs := e.runsSince(sent); len(runs) != 0 {
						t.Errorf("%d passes after a refused webhook, want none", len(runs))
					}
				})
			}
			if e.lastNames("Forged") != 0 {
				t.Error("a forged payload reached the workspace")
			}
		})
	}
}
