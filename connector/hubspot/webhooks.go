package hubspot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/changehook"
)

// The v3 signature's headers and the age past which a request is stale
// (FACTS.md, "Validating requests").
const (
	SignatureHeader = "X-HubSpot-Signature-v3"
	TimestampHeader = "X-HubSpot-Request-Timestamp"
	MaxRequestAge   = 5 * time.Minute
)

// Webhooks are the `webhooks:` settings of a hubspot connector: the app
// whose change webhooks start a pass at once. Absent, the connector
// polls on its schedule only.
type Webhooks struct {
	// ClientSecret is the client secret of the app (private or public)
	// whose webhooks call syncd: HubSpot signs each request with it,
	// e.g. ${HUBSPOT_CLIENT_SECRET}.
	ClientSecret Secret `yaml:"clientSecret"`
	// URL is the target URL entered in the app's webhook settings, as
	// HubSpot calls it: the webhook listener's public address followed by
	// /webhooks/connectors/<connector name>, with its query string if it
	// was entered with one. The signature covers it, so it must be
	// exactly the URL HubSpot calls.
	URL string `yaml:"url"`
}

// validate returns the problems of the webhooks settings, each naming
// its key under webhooks.
func (w *Webhooks) validate() []error {
	var errs []error
	if strings.TrimSpace(w.ClientSecret.Reveal()) == "" {
		errs = append(errs, fmt.Errorf("webhooks.clientSecret: required (the app's client secret, which signs its webhooks, e.g. ${HUBSPOT_CLIENT_SECRET})"))
	}
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		errs = append(errs, fmt.Errorf("webhooks.url: %q is not an http(s) URL; give the target URL entered in the app's webhook settings, e.g. https://syncd.example.com/webhooks/connectors/<name>", w.URL))
	}
	return errs
}

// uriDecoder undoes the percent-encoding of the characters HubSpot's
// "Validating requests" page lists, which the v3 signature's URI has
// decoded.
var uriDecoder = strings.NewReplacer(
	"%3A", ":", "%2F", "/", "%3F", "?", "%40", "@", "%21", "!", "%24", "$",
	"%27", "'", "%28", "(", "%29", ")", "%2A", "*", "%2C", ",", "%3B", ";",
)

// SignV3 returns the X-HubSpot-Signature-v3 value of a request: the
// base64 of HMAC-SHA256, keyed with the app's client secret, of method +
// URI (with the listed characters decoded) + body + timestamp (the
// X-HubSpot-Request-Timestamp value, milliseconds since the epoch).
func SignV3(secret, method, uri string, body []byte, timestamp string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method + uriDecoder.Replace(uri)))
	m.Write(body)
	m.Write([]byte(timestamp))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signedURI is the URI HubSpot signed: the target URL it called, which
// is webhooks.url as entered in the app's settings, query string
// included. Only when webhooks.url has no query string and the request
// came with one (a target URL entered with a query that webhooks.url
// left out) is the request's query added to it.
func signedURI(target string, r *http.Request) string {
	if strings.Contains(target, "?") || r.URL.RawQuery == "" {
		return target
	}
	return target + "?" + r.URL.RawQuery
}

// verifier checks HubSpot's v3 signature of a delivery to the target URL
// of the settings (signedURI), and refuses a timestamp more than
// MaxRequestAge from the clock either way.
func verifier(secret, target string) changehook.Verifier {
	return func(r *http.Request, body []byte, now time.Time) error {
		sig, ts := r.Header.Get(SignatureHeader), r.Header.Get(TimestampHeader)
		if sig == "" || ts == "" {
			return fmt.Errorf("%w: no %s or %s header", changehook.ErrRefused, SignatureHeader, TimestampHeader)
		}
		ms, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: %s %q is not milliseconds since the epoch", changehook.ErrRefused, TimestampHeader, ts)
		}
		if age := now.Sub(time.UnixMilli(ms)); age > MaxRequestAge || age < -MaxRequestAge {
			return fmt.Errorf("%w: timestamp %s old, over %s", changehook.ErrRefused, age.Round(time.Second), MaxRequestAge)
		}
		want := SignV3(secret, r.Method, signedURI(target, r), body, ts)
		if !hmac.Equal([]byte(sig), []byte(want)) {
			return fmt.Errorf("%w: the v3 signature does not match (is webhooks.clientSecret the app's, and webhooks.url the target URL it calls?)", changehook.ErrRefused)
		}
		return nil
	}
}

// webhookSettle is how long after a burst of deliveries the trailing
// pass reads again: HubSpot does not document how soon search shows a
// change its webhook announced (FACTS.md), and the look-back re-reads
// the rest at the next scheduled pass.
const webhookSettle = 3 * time.Second

// RegisterWebhook cannot register: a HubSpot app's webhook target URL
// and subscriptions are set in the app's settings. The error says what
// to enter.
func (s *Source) RegisterWebhook(context.Context, bool) (string, error) {
	if s.Webhook() == nil {
		return "", connector.ErrWebhooksOff
	}
	return "", fmt.Errorf("%w: in HubSpot, the app's Webhooks settings: target URL %s; subscriptions contact.creation, contact.deletion, contact.merge, contact.restore and contact.propertyChange of each property the mapping reads; and the app's client secret as webhooks.clientSecret",
		connector.ErrManualWebhook, s.hookURL)
}

var _ connector.WebhookSource = (*Source)(nil)
