package pipedrive

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

func TestWebhooksSettingsValidate(t *testing.T) {
	const pw = "a-long-enough-password"
	for _, tc := range []struct {
		name string
		w    Webhooks
		want []string
	}{
		{"complete", Webhooks{URL: "https://syncd.example.com/webhooks/connectors/pd", Password: pw}, nil},
		{"empty", Webhooks{}, []string{"webhooks.url", "webhooks.password"}},
		{"short password", Webhooks{URL: "https://syncd.example.com/x", Password: "short"}, []string{"webhooks.password"}},
		{"colon in user", Webhooks{URL: "https://syncd.example.com/x", User: "a:b", Password: pw}, []string{"webhooks.user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSettings()
			s.APIToken, s.Webhooks = "token", &tc.w
			errs := s.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want one for each of %v", errs, tc.want)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]+":") {
					t.Errorf("error %q does not name %s", e, tc.want[i])
				}
				if strings.Contains(e.Error(), pw) || strings.Contains(e.Error(), "short\"") {
					t.Errorf("error %q shows the password", e)
				}
			}
		})
	}
}

// RegisterWebhook makes one v2 person webhook with the settings' Basic
// credentials, keeps it when run again, and makes it anew with replace.
func TestRegisterWebhook(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	const url = "https://syncd.example.com/webhooks/connectors/pd"
	set := NewSettings()
	set.APIToken, set.BaseURL = connector.Secret(srv.Token()), srv.URL
	set.Webhooks = &Webhooks{URL: url, Password: "a-long-enough-password"}
	l := logrus.New()
	l.SetOutput(io.Discard)
	src, err := Open(context.Background(), connector.Options{Name: "pd", Settings: set, Log: logrus.NewEntry(l)})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := context.Background()
	for _, step := range []struct {
		name    string
		replace bool
		said    string
	}{
		{"first", false, "created"},
		{"again", false, "kept"},
		{"replace", true, "created"},
	} {
		what, err := src.RegisterWebhook(ctx, step.replace)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		hooks := srv.Webhooks()
		if len(hooks) != 1 {
			t.Fatalf("%s: %d webhooks, want 1", step.name, len(hooks))
		}
		h := hooks[0]
		if h.SubscriptionURL != url || h.EventObject != "person" || h.EventAction != "*" || h.Version != "2.0" ||
			h.HTTPAuthUser != DefaultWebhookUser || h.HTTPAuthPass != "a-long-enough-password" {
			t.Errorf("%s: webhook %+v", step.name, h)
		}
		if !strings.Contains(what, step.said) {
			t.Errorf("%s: said %q, want %q", step.name, what, step.said)
		}
	}
}
