package daemon_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// The reverse direction's counters reach the metrics, and its receiver
// the readiness checks, once it is started (Start observes it).
func TestPGWebhookMetricsAndReadiness(t *testing.T) {
	ctx := context.Background()
	e := newPGEnv(t, 3, emulator.Options{})

	// A person's edit in the app: a delivery accepted and applied.
	c := e.contactOf(1)
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Edited")}})
	e.waitQuiet(5 * time.Second)
	// The same delivery again: a duplicate. A forged one: refused.
	c = e.contactOf(2)
	h, body := signedEvent(t, e.secret, "msg-dup-1", c)
	if code := e.post(h, body); code != 200 {
		t.Fatalf("first delivery = %d", code)
	}
	if code := e.post(h, body); code != 200 {
		t.Fatalf("repeated delivery = %d", code)
	}
	h2, body2 := signedEvent(t, "whsec_"+strings.Repeat("A", 32), "msg-forged", c)
	if code := e.post(h2, body2); code != 401 {
		t.Fatalf("forged delivery = %d, want 401", code)
	}
	// An envelope whose contact is in neither data.object nor
	// data.resource (a future change of the service's envelope): refused
	// and counted by reason.
	renamed := []byte(`{"id":"EVrenamed","object":"event","type":"contact.updated","data":{"payload":{"id":"` + c.ID + `"}}}`)
	h3, _ := signature.SignHeaders(e.secret, "msg-renamed", time.Now(), renamed)
	if code := e.post(h3, renamed); code != 400 {
		t.Fatalf("delivery without a contact = %d, want 400", code)
	}
	e.waitQuiet(5 * time.Second)

	rs, as := e.rev.Receiver.Stats(), e.rev.Applier.Stats()
	if rs.Accepted < 2 || rs.Duplicates != 1 || rs.Refused != 2 || as.Echoes < 1 {
		t.Fatalf("receiver %+v, applier echoes %d: the scenario did not happen as planned", rs, as.Echoes)
	}
	rec := httptest.NewRecorder()
	e.d.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := rec.Body.String()
	for _, want := range []string{
		`syncd_webhook_deliveries_total{result="accepted"} ` + itoa(rs.Accepted),
		`syncd_webhook_deliveries_total{result="duplicate"} 1`,
		`syncd_webhook_deliveries_total{result="refused"} 2`,
		`syncd_webhook_refused_total{reason="bad_signature"} 1`,
		`syncd_webhook_refused_total{reason="no_contact"} 1`,
		`syncd_webhook_refused_total{reason="malformed_envelope"} 0`,
		`syncd_webhook_echoes_total ` + itoa(as.Echoes),
		`syncd_writeback_put_off_dead_letters_total ` + itoa(as.PutOffDeadLetters),
		`syncd_webhook_inbox_pending 0`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	checkOK(t, e.d.Ready(ctx), "webhooks", true)
	if st, _ := e.d.Status(ctx); st.Webhooks != e.rev.Addr {
		t.Errorf("status webhooks = %q, want %q", st.Webhooks, e.rev.Addr)
	}
	e.rev.Stop()
	checkOK(t, e.d.Ready(ctx), "webhooks", false)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
