package hubspotemu

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"
)

// SignatureVector is one request signature computed by HubSpot's own
// client library (testdata/signature-vectors.py writes them).
type SignatureVector struct {
	Name, Version, Method, Secret, Body, Timestamp, Signature string
	// Target is the target URL as entered in HubSpot (what it calls);
	// SignedURI what the library was given: the target with the
	// characters of the "Validating requests" table decoded.
	Target    string
	SignedURI string `json:"signedURI"`
}

// loadSignatureVectors reads testdata/signature-vectors.json.
func loadSignatureVectors(t *testing.T) []SignatureVector {
	t.Helper()
	b, err := os.ReadFile("testdata/signature-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Vectors []SignatureVector }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors in testdata/signature-vectors.json")
	}
	return f.Vectors
}

// The test server signs as HubSpot's client library validates: the
// documented v1 and v2 examples, the library's own v3 test vector, and
// v3 over a target URL with a query string and with encoded characters
// (signed by HubSpot over the target with them decoded).
func TestSignaturesMatchHubSpotLibrary(t *testing.T) {
	for _, v := range loadSignatureVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var got string
			switch v.Version {
			case "v1":
				got = SignatureV1(v.Secret, []byte(v.Body))
			case "v2":
				got = SignatureV2(v.Secret, v.Method, v.Target, []byte(v.Body))
			case "v3":
				got = SignatureV3(v.Secret, v.Method, v.Target, []byte(v.Body), v.Timestamp)
			default:
				t.Fatalf("version %q", v.Version)
			}
			if got != v.Signature {
				t.Errorf("%s signature %q, HubSpot's library computes %q", v.Version, got, v.Signature)
			}
		})
	}
}

// Each delivery carries a v1 signature HubSpot's library accepts, beside
// the v3 one.
func TestDeliverySignaturesV1(t *testing.T) {
	rc := &receiver{statuses: []int{200}}
	hook := newHook(t, rc)
	s := NewServer(Options{})
	t.Cleanup(s.Close)
	s.SetWebhooks(&WebhookTarget{URL: hook + "/hook?key=k1", ClientSecret: "secret"})
	s.Add(map[string]string{"email": "a@example.com"})
	waitFor(t, "a delivery", func() bool { return rc.requests() == 1 })
	rc.mu.Lock()
	defer rc.mu.Unlock()
	h, body := rc.headers[0], rc.bodies[0]
	if got, want := h.Get("X-HubSpot-Signature"), SignatureV1("secret", body); got != want || h.Get("X-HubSpot-Signature-Version") != "v1" {
		t.Errorf("v1 signature %q version %q, want %q v1", got, h.Get("X-HubSpot-Signature-Version"), want)
	}
	if got, want := h.Get("X-HubSpot-Signature-v3"), SignatureV3("secret", http.MethodPost, hook+"/hook?key=k1", body, h.Get("X-HubSpot-Request-Timestamp")); got != want {
		t.Errorf("v3 signature %q, want %q (over the target URL with its query string)", got, want)
	}
	if rc.queries[0] != "key=k1" {
		t.Errorf("the delivery's query %q, want the target URL's key=k1", rc.queries[0])
	}
}
