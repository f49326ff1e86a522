package state

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWebhookSecretRotation(t *testing.T) {
	s, clk := openTest(t)
	if _, _, err := s.WebhookSecrets(); !errors.Is(err, ErrNotFound) {
		t.Fatalf("WebhookSecrets with none = %v, want ErrNotFound", err)
	}
	must(t, s.PutWebhookSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_old"}))
	cur, prev, err := s.WebhookSecrets()
	if err != nil || cur.Secret != "whsec_old" || len(prev) != 0 || !cur.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("after register: %+v %+v %v", cur, prev, err)
	}

	// Rotate: the new secret becomes current, the old one stays valid for
	// a grace period.
	clk.Advance(time.Hour)
	old := cur
	old.ExpiresAt = clk.Now().Add(24 * time.Hour)
	must(t, s.PutWebhookSecret(old))
	must(t, s.PutWebhookSecret(WebhookSecret{WebhookID: "wh1", Secret: "whsec_new"}))
	s = reopen(t, s, clk)
	cur, prev, err = s.WebhookSecrets()
	if err != nil || cur.Secret != "whsec_new" || len(prev) != 1 || prev[0].Secret != "whsec_old" ||
		!prev[0].ExpiresAt.Equal(old.ExpiresAt) {
		t.Fatalf("after rotate: %+v %+v %v", cur, prev, err)
	}

	// After the grace period only the new secret is accepted, and the next
	// write removes the expired one.
	clk.Advance(24 * time.Hour)
	cur, prev, _ = s.WebhookSecrets()
	if cur.Secret != "whsec_new" || len(prev) != 0 {
		t.Fatalf("after grace: %+v %+v", cur, prev)
	}
	must(t, s.PutWebhookSecret(WebhookSecret{WebhookID: "wh2", Secret: "whsec_other", CreatedAt: clk.Now().Add(-48 * time.Hour)}))
	cur, prev, _ = s.WebhookSecrets()
	if cur.Secret != "whsec_new" || len(prev) != 1 || prev[0].Secret != "whsec_other" {
		t.Fatalf("current is the newest by CreatedAt: %+v %+v", cur, prev)
	}

	must(t, s.DeleteWebhookSecrets("wh1"))
	cur, prev, _ = s.WebhookSecrets()
	if cur.Secret != "whsec_other" || len(prev) != 0 {
		t.Fatalf("after deleting wh1: %+v %+v", cur, prev)
	}
}

func TestPutWebhookSecretNeverPrintsTheSecret(t *testing.T) {
	s, _ := openTest(t)
	err := s.PutWebhookSecret(WebhookSecret{Secret: "whsec_topsecret"})
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error = %v", err)
	}
	must(t, s.Close())
	err = s.PutWebhookSecret(WebhookSecret{WebhookID: "wh", Secret: "whsec_topsecret"})
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("error on a closed store = %v", err)
	}
}
