package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWebhookSecretRotation(t *testing.T) {
	s, clk := openTest(t)
	if _, _, err := s.Webhooks.Secrets(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("WebhookSecrets with none = %v, want ErrNotFound", err)
	}
	must(t, s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_old"}))
	cur, prev, err := s.Webhooks.Secrets()
	if err != nil || cur.Secret != "whsec_old" || len(prev) != 0 || !cur.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("after register: %+v %+v %v", cur, prev, err)
	}

	// Rotate: the new secret becomes current, the old one stays valid for
	// a grace period.
	clk.Advance(time.Hour)
	old := cur
	old.ExpiresAt = clk.Now().Add(24 * time.Hour)
	must(t, s.Webhooks.PutSecret(old))
	must(t, s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_new"}))
	s = reopen(t, s, clk)
	cur, prev, err = s.Webhooks.Secrets()
	if err != nil || cur.Secret != "whsec_new" || len(prev) != 1 || prev[0].Secret != "whsec_old" ||
		!prev[0].ExpiresAt.Equal(old.ExpiresAt) {
		t.Fatalf("after rotate: %+v %+v %v", cur, prev, err)
	}

	// After the grace period only the new secret is accepted, and the next
	// write removes the expired one.
	clk.Advance(24 * time.Hour)
	cur, prev, _ = s.Webhooks.Secrets()
	if cur.Secret != "whsec_new" || len(prev) != 0 {
		t.Fatalf("after grace: %+v %+v", cur, prev)
	}
	must(t, s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh2", Secret: "whsec_other", CreatedAt: clk.Now().Add(-48 * time.Hour)}))
	cur, prev, _ = s.Webhooks.Secrets()
	if cur.Secret != "whsec_new" || len(prev) != 1 || prev[0].Secret != "whsec_other" {
		t.Fatalf("current is the newest by CreatedAt: %+v %+v", cur, prev)
	}

	must(t, s.Webhooks.DeleteSecrets("wh1"))
	cur, prev, _ = s.Webhooks.Secrets()
	if cur.Secret != "whsec_other" || len(prev) != 0 {
		t.Fatalf("after deleting wh1: %+v %+v", cur, prev)
	}
}

func TestPutWebhookSecretNeverPrintsTheSecret(t *testing.T) {
	s, _ := openTest(t)
	err := s.Webhooks.PutSecret(WebhookSecret{Secret: "whsec_topsecret"})
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error = %v", err)
	}
	must(t, s.Close())
	err = s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh", Secret: "whsec_topsecret"})
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error on a closed store = %v", err)
	}
}

// The receiver reads the secrets for every delivery from memory: a write
// by the same store must show at the next read, without a reopen.
func TestWebhookSecretsSeeEachWriteAtOnce(t *testing.T) {
	s, clk := openTest(t)
	must(t, s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_old"}))
	if cur, _, err := s.Webhooks.Secrets(); err != nil || cur.Secret != "whsec_old" {
		t.Fatalf("after register: %+v %v", cur, err)
	}
	clk.Advance(time.Minute)
	must(t, s.Webhooks.PutSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_new"}))
	cur, prev, err := s.Webhooks.Secrets()
	if err != nil || cur.Secret != "whsec_new" || len(prev) != 1 || prev[0].Secret != "whsec_old" {
		t.Fatalf("after rotate: %+v %+v %v", cur, prev, err)
	}
	prev[0].Secret = "changed by the caller"
	if _, prev, _ := s.Webhooks.Secrets(); prev[0].Secret != "whsec_old" {
		t.Fatalf("a caller's change reached the store: %+v", prev)
	}
	must(t, s.Webhooks.DeleteSecrets("wh1"))
	if _, _, err := s.Webhooks.Secrets(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v, want ErrNotFound", err)
	}
}

// TestWebhookRoutesRemembered: the form of the webhook routes is empty in
// a new file, kept across a reopen once put, and replaced by a later put.
func TestWebhookRoutesRemembered(t *testing.T) {
	s, clk := openTest(t)
	if form, err := s.Webhooks.Routes(); err != nil || form != "" {
		t.Fatalf("new file: %q %v, want none", form, err)
	}
	if err := s.Webhooks.PutRoutes(""); err == nil {
		t.Fatal("an empty form was recorded")
	}
	must(t, s.Webhooks.PutRoutes("v1"))
	s = reopen(t, s, clk)
	if form, err := s.Webhooks.Routes(); err != nil || form != "v1" {
		t.Fatalf("after reopen: %q %v, want v1", form, err)
	}
	must(t, s.Webhooks.PutRoutes("spec"))
	if form, _ := s.Webhooks.Routes(); form != "spec" {
		t.Fatalf("after a second put: %q, want spec", form)
	}
	if v, err := s.SchemaVersion(); err != nil || v != CurrentSchemaVersion() {
		t.Fatalf("schema version %d %v after putting webhook routes", v, err)
	}
}
