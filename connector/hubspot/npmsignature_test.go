//go:build hubspotnpm

package hubspot

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/internal/testkit/testenv"
)

// TestOfficialNodeClientSignatures checks HubSpot's request signatures
// both ways with HubSpot's official Node.js client (npm
// @hubspot/api-client, Signature): the v3 and v1 signatures of
// hubspotemu's deliveries to a target URL with a query string validate
// with Signature.isValid, and the v3 signatures Signature.getSignature
// makes for that URL pass the connector's verifier, which refuses them
// with another body, timestamp or secret. Run it with
//
//	npm install --prefix /tmp/hs @hubspot/api-client@14.0.1
//	HUBSPOT_NPM_DIR=/tmp/hs go test -tags hubspotnpm -run TestOfficialNodeClientSignatures ./connector/hubspot/
func TestOfficialNodeClientSignatures(t *testing.T) {
	dir := testenv.Require(t, "HUBSPOT_NPM_DIR", "run npm install --prefix DIR @hubspot/api-client and set HUBSPOT_NPM_DIR=DIR")
	const secret = "yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy"
	type delivery struct {
		Body      string `json:"body"`
		Timestamp string `json:"timestamp"`
		V3        string `json:"v3"`
		V1        string `json:"v1"`
	}
	var (
		mu  sync.Mutex
		got []delivery
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, delivery{string(body), r.Header.Get(TimestampHeader), r.Header.Get(SignatureHeader), r.Header.Get("X-HubSpot-Signature")})
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	target := hook.URL + "/webhooks/connectors/crm?portal=62515&app=54321"
	srv := hubspotemu.NewServer(hubspotemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetWebhooks(&hubspotemu.WebhookTarget{URL: target, ClientSecret: secret, AppID: 54321, PortalID: 62515})
	id := srv.Add(map[string]string{"email": "a@example.com", "lastname": "Before"})
	if err := srv.Update(id, map[string]string{"lastname": "Ünïcødé (après)"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; n < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		n = 0
		for _, d := range got {
			n += strings.Count(d.Body, `"eventId"`)
		}
		mu.Unlock()
	}
	mu.Lock()
	deliveries := append([]delivery(nil), got...)
	mu.Unlock()
	if len(deliveries) == 0 {
		t.Fatal("no delivery within 10 s")
	}

	toSign := []string{`[{"objectId":1,"subscriptionType":"contact.creation"}]`, `[{"objectId":2,"propertyValue":"Ünïcødé"}]`}
	in, _ := json.Marshal(map[string]any{"secret": secret, "target": target, "toSign": toSign, "deliveries": deliveries})
	path := filepath.Join(t.TempDir(), "deliveries.json")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "testdata/npm-signature-check.cjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"), "HS_DELIVERIES="+path)
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("the official client: %v", err)
	}
	var out struct {
		Checked []struct{ V3, V1 bool }
		Signed  []struct{ Body, Timestamp, Signature string }
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatalf("%v: %s", err, outb)
	}
	for i, c := range out.Checked {
		if !c.V3 || !c.V1 {
			t.Errorf("delivery %d: Signature.isValid v3 %v, v1 %v; want both valid", i, c.V3, c.V1)
		}
	}
	check := func(body, ts, sig, secretUsed string) error {
		r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		r.Header.Set(TimestampHeader, ts)
		r.Header.Set(SignatureHeader, sig)
		return verifier(secretUsed, target)(r, []byte(body), time.Now())
	}
	for i, s := range out.Signed {
		if err := check(s.Body, s.Timestamp, s.Signature, secret); err != nil {
			t.Errorf("signed %d: the client's signature refused: %v", i, err)
		}
		ms, _ := strconv.ParseInt(s.Timestamp, 10, 64)
		for name, err := range map[string]error{
			"another body":      check(s.Body+" ", s.Timestamp, s.Signature, secret),
			"another timestamp": check(s.Body, strconv.FormatInt(ms-1, 10), s.Signature, secret),
			"another secret":    check(s.Body, s.Timestamp, s.Signature, "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz"),
		} {
			if err == nil {
				t.Errorf("signed %d, %s: accepted", i, name)
			}
		}
	}
	t.Logf("%d deliveries validated by @hubspot/api-client, %d of its signatures verified", len(out.Checked), len(out.Signed))
}
