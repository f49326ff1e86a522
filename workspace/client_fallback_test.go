package workspace_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// fallbackClient is a client of base with key, the form of the webhook
// routes known (or "") and a recorder of the forms it reports found.
type fallbackClient struct {
	*workspace.Client
	logs  *bytes.Buffer
	mu    sync.Mutex
	found []string
}

func newFallbackClient(t *testing.T, base, key, known string) *fallbackClient {
	t.Helper()
	fc := &fallbackClient{logs: &bytes.Buffer{}}
	log := logrus.New()
	log.SetOutput(fc.logs)
	c, err := workspace.NewClient(workspace.ClientOptions{BaseURL: base, APIKey: key, RateLimit: 1000, Burst: 100,
		Log: logrus.NewEntry(log), WebhookRoutes: known,
		WebhookRoutesFound: func(form string) { fc.mu.Lock(); fc.found = append(fc.found, form); fc.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	fc.Client = c
	return fc
}

func (fc *fallbackClient) foundForms() []string {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]string(nil), fc.found...)
}

// TestWebhookRoutesFoundOnce: a client that does not know the form of
// the webhook routes lists the webhooks in the spec's form, and on a 404
// in the /v1 form; the form that answered is reported once and used by
// every webhook operation after it, with no other request in the wrong
// form. A client told the form (as state remembers it) asks nothing to
// find it out.
func TestWebhookRoutesFoundOnce(t *testing.T) {
	tests := []struct {
		name      string
		served    string // emulator.Options.WebhookRoutes
		known     string // the form the client is told
		wantForm  string
		wantFound []string
		wantMiss  int // requests in the form not served
	}{
		{name: "spec form served", served: emulator.RoutesSpec, wantForm: workspace.WebhookRoutesSpec, wantFound: []string{"spec"}},
		{name: "only the /v1 form served", served: emulator.RoutesV1, wantForm: workspace.WebhookRoutesV1, wantFound: []string{"v1"}, wantMiss: 1},
		{name: "both served: the spec's first", served: emulator.RoutesBoth, wantForm: workspace.WebhookRoutesSpec, wantFound: []string{"spec"}},
		{name: "remembered /v1", served: emulator.RoutesV1, known: workspace.WebhookRoutesV1, wantForm: workspace.WebhookRoutesV1},
		{name: "remembered spec", served: emulator.RoutesSpec, known: workspace.WebhookRoutesSpec, wantForm: workspace.WebhookRoutesSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			emu := emulator.NewServer(emulator.Options{APIKey: "k", Rate: -1, WebhookRoutes: tt.served})
			defer emu.Close()
			c := newFallbackClient(t, emu.URL, "k", tt.known)
			whs, err := c.ListWebhooks(ctx)
			if err != nil || len(whs) != 0 {
				t.Fatalf("list: %v %v", whs, err)
			}
			wh, err := c.CreateWebhook(ctx, workspace.WebhookCreate{URL: "https://example.com/h", Events: []string{workspace.EventContactUpdated}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.GetWebhook(ctx, wh.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.RotateWebhookSecret(ctx, wh.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.WebhookDeliveries(ctx, wh.ID); err != nil {
				t.Fatal(err)
			}
			if whs, err := c.ListWebhooks(ctx); err != nil || len(whs) != 1 {
				t.Fatalf("second list: %v %v", whs, err)
			}
			if err := c.DeleteWebhook(ctx, wh.ID); err != nil {
				t.Fatal(err)
			}
			if got := c.WebhookRoutesForm(); got != tt.wantForm {
				t.Errorf("form %q, want %q", got, tt.wantForm)
			}
			if got := c.foundForms(); strings.Join(got, ",") != strings.Join(tt.wantFound, ",") {
				t.Errorf("reported %v, want %v", got, tt.wantFound)
			}
			st := emu.Stats()
			if got := st.Requests["GET (unmatched)"]; got != tt.wantMiss {
				t.Errorf("%d requests in the form not served, want %d (%v)", got, tt.wantMiss, st.Requests)
			}
			list := workspace.WebhookRoute(workspace.RouteListWebhooks, tt.wantForm)
			if got := st.Requests[list]; got != 2 {
				t.Errorf("%s asked %d times, want 2 (the first list finds the form out and is the answer)", list, got)
			}
			for _, r := range []string{workspace.RouteCreateWebhook, workspace.RouteGetWebhook, workspace.RouteRotateWebhookSecret,
				workspace.RouteWebhookDeliveries, workspace.RouteDeleteWebhook} {
				if got := st.Requests[workspace.WebhookRoute(r, tt.wantForm)]; got != 1 {
					t.Errorf("%s asked %d times, want 1 (%v)", workspace.WebhookRoute(r, tt.wantForm), got, st.Requests)
				}
			}
			if len(tt.wantFound) > 0 && !strings.Contains(c.logs.String(), "webhook routes found") {
				t.Errorf("no log line says which form was found:\n%s", c.logs)
			}
		})
	}
}

// TestWebhookRoutesMovedOrMissing: a remembered form that answers the
// list 404 is found out again (and reported); a service that answers 404
// in both forms fails with ErrNoWebhookRoutes, reports nothing, and a
// refused key is not mistaken for a missing route.
func TestWebhookRoutesMovedOrMissing(t *testing.T) {
	ctx := context.Background()
	t.Run("moved", func(t *testing.T) {
		emu := emulator.NewServer(emulator.Options{APIKey: "k", Rate: -1, WebhookRoutes: emulator.RoutesV1})
		defer emu.Close()
		c := newFallbackClient(t, emu.URL, "k", workspace.WebhookRoutesSpec)
		if _, err := c.ListWebhooks(ctx); err != nil {
			t.Fatal(err)
		}
		if got := c.foundForms(); len(got) != 1 || got[0] != workspace.WebhookRoutesV1 || c.WebhookRoutesForm() != workspace.WebhookRoutesV1 {
			t.Fatalf("reported %v, form %q: want v1 found again", got, c.WebhookRoutesForm())
		}
	})
	t.Run("neither form", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found","title":"Not Found"}`))
		}))
		defer srv.Close()
		c := newFallbackClient(t, srv.URL, "k", "")
		_, err := c.ListWebhooks(ctx)
		if !errors.Is(err, workspace.ErrNoWebhookRoutes) || !strings.Contains(err.Error(), "GET /v1/webhooks") {
			t.Fatalf("err %v, want ErrNoWebhookRoutes naming both routes", err)
		}
		if len(c.foundForms()) != 0 || c.WebhookRoutesForm() != "" {
			t.Fatalf("a form was reported: %v", c.foundForms())
		}
	})
	t.Run("refused key", func(t *testing.T) {
		emu := emulator.NewServer(emulator.Options{APIKey: "k", Rate: -1})
		defer emu.Close()
		c := newFallbackClient(t, emu.URL, "wrong", "")
		if _, err := c.ListWebhooks(ctx); !workspace.IsUnauthorized(err) {
			t.Fatalf("err %v, want unauthorized", err)
		}
		if len(c.foundForms()) != 0 || c.WebhookRoutesForm() != "" {
			t.Fatalf("a form was reported after a 401: %v", c.foundForms())
		}
	})
}

// TestCheckAccessFallsBack: the credential check asks GET
// /v1/organization; where that answers 404 it asks the custom-field list,
// says so once in the log, and from then on asks the list directly. A
// refused key is refused either way.
func TestCheckAccessFallsBack(t *testing.T) {
	tests := []struct {
		name       string
		noOrg      bool
		key        string
		wantRoute  string
		wantUnauth bool
		wantOrg    int // organization requests after two checks
		wantList   int
	}{
		{name: "organization served", key: "k", wantRoute: workspace.RouteOrganization, wantOrg: 2},
		{name: "organization 404: custom-field list", noOrg: true, key: "k", wantRoute: workspace.RouteCustomFields, wantOrg: 1, wantList: 2},
		{name: "refused key", key: "bad", wantRoute: workspace.RouteOrganization, wantUnauth: true, wantOrg: 2},
		// The emulator answers a route it lacks 404 before the key: the
		// list then refuses the key.
		{name: "refused key, organization 404", noOrg: true, key: "bad", wantRoute: workspace.RouteCustomFields, wantUnauth: true, wantOrg: 1, wantList: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := emulator.NewServer(emulator.Options{APIKey: "k", Rate: -1, NoOrganization: tt.noOrg})
			defer emu.Close()
			c := newFallbackClient(t, emu.URL, tt.key, "")
			for i := 0; i < 2; i++ {
				route, err := c.CheckAccess(context.Background())
				if route != tt.wantRoute || workspace.IsUnauthorized(err) != tt.wantUnauth || (err != nil) != tt.wantUnauth {
					t.Fatalf("check %d: %q %v, want %q (unauthorized %v)", i+1, route, err, tt.wantRoute, tt.wantUnauth)
				}
			}
			st := emu.Stats()
			org := st.Requests[workspace.RouteOrganization] + st.Requests["GET (unmatched)"]
			if org != tt.wantOrg || st.Requests[workspace.RouteCustomFields] != tt.wantList {
				t.Errorf("requests %v: want %d to the organization, %d to the list", st.Requests, tt.wantOrg, tt.wantList)
			}
			if got := strings.Count(c.logs.String(), "checked with the custom-field list instead"); got != min(tt.wantList, 1) {
				t.Errorf("fallback logged %d times, want %d:\n%s", got, min(tt.wantList, 1), c.logs)
			}
		})
	}
}
