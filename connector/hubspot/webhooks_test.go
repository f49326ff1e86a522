package hubspot

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspottest"
)

func TestWebhooksSettingsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    Webhooks
		want []string
	}{
		{"complete", Webhooks{ClientSecret: "s3cret", URL: "https://syncd.example.com/webhooks/connectors/hs"}, nil},
		{"empty", Webhooks{}, []string{"webhooks.clientSecret", "webhooks.url"}},
		{"relative URL", Webhooks{ClientSecret: "s", URL: "/webhooks/connectors/hs"}, []string{"webhooks.url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSettings()
			s.Token, s.Webhooks = "token", &tc.w
			errs := s.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want one for each of %v", errs, tc.want)
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tc.want[i]+":") {
					t.Errorf("error %q does not name %s", e, tc.want[i])
				}
				if strings.Contains(e.Error(), "s3cret") {
					t.Errorf("error %q shows the secret", e)
				}
			}
		})
	}
}

// The connector's check of the v3 signature agrees with hubspottest's,
// written apart from it from HubSpot's page, including the decoded URI
// characters and the query string.
func TestVerifierV3(t *testing.T) {
	const secret, target = "app-secret", "https://syncd.example.com/webhooks/connectors/hs"
	now := time.Now()
	body := []byte(`[{"objectId":1}]`)
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	for _, tc := range []struct {
		name    string
		query   string
		signURI string
		ts      string
		ok      bool
	}{
		{"signed now", "", target, ms(0), true},
		{"4 minutes old", "", target, ms(-4 * time.Minute), true},
		{"6 minutes old", "", target, ms(-6 * time.Minute), false},
		{"6 minutes ahead", "", target, ms(6 * time.Minute), false},
		{"query string", "a=b%3Ac", target + "?a=b:c", ms(0), true},
		{"another URL", "", "https://other.example.com/webhooks/connectors/hs", ms(0), false},
		{"not milliseconds", "", target, "yesterday", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := "/webhooks/connectors/hs"
			if tc.query != "" {
				u += "?" + tc.query
			}
			r := httptest.NewRequest(http.MethodPost, u, bytes.NewReader(body))
			r.Header.Set(TimestampHeader, tc.ts)
			r.Header.Set(SignatureHeader, hubspottest.SignatureV3(secret, http.MethodPost, tc.signURI, body, tc.ts))
			err := verifier(secret, target)(r, body, now)
			if (err == nil) != tc.ok {
				t.Errorf("verify: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
