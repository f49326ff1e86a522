package hubspot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector/changehook"
)

// The signatures' headers and the age past which a v3 request is stale
// (FACTS.md, "Validating requests").
const (
	SignatureHeader        = "X-HubSpot-Signature-v3"
	TimestampHeader        = "X-HubSpot-Request-Timestamp"
	OlderSignatureHeader   = "X-HubSpot-Signature"
	SignatureVersionHeader = "X-HubSpot-Signature-Version"
	MaxRequestAge          = 5 * time.Minute
)

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

// SignV1 returns the X-HubSpot-Signature value of version v1: the hex
// SHA-256 of client secret + body.
func SignV1(secret string, body []byte) string {
	sum := sha256.Sum256(append([]byte(secret), body...))
	return hex.EncodeToString(sum[:])
}

// SignV2 returns the X-HubSpot-Signature value of version v2: the hex
// SHA-256 of client secret + method + URI (exactly as called) + body.
func SignV2(secret, method, uri string, body []byte) string {
	sum := sha256.Sum256(append([]byte(secret+method+uri), body...))
	return hex.EncodeToString(sum[:])
}

// verifier checks the signature of a delivery to the target URL of the
// settings (signedURI) as HubSpot's "Validating requests" page says: the
// v3 signature when the request carries one, refusing a timestamp more
// than MaxRequestAge from the clock either way; else the older version
// X-HubSpot-Signature-Version names (v1 or v2), which HubSpot still
// sends for compatibility. The older ones carry no timestamp: a replayed
// delivery could at most start a read, as any delivery.
func verifier(secret, target string) changehook.Verifier {
	return func(r *http.Request, body []byte, now time.Time) error {
		sig, ts := r.Header.Get(SignatureHeader), r.Header.Get(TimestampHeader)
		if sig == "" {
			return verifyOlder(secret, target, r, body)
		}
		if ts == "" {
			return fmt.Errorf("%w: %s without %s", changehook.ErrRefused, SignatureHeader, TimestampHeader)
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

// verifyOlder checks the v1 or v2 signature of a request that carries
// no v3 one.
func verifyOlder(secret, target string, r *http.Request, body []byte) error {
	sig := strings.ToLower(r.Header.Get(OlderSignatureHeader))
	var want string
	switch v := r.Header.Get(SignatureVersionHeader); v {
	case "v1":
		want = SignV1(secret, body)
	case "v2":
		want = SignV2(secret, r.Method, signedURI(target, r), body)
	default:
		return fmt.Errorf("%w: no %s, and %s %q is not v1 or v2", changehook.ErrRefused, SignatureHeader, SignatureVersionHeader, v)
	}
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return fmt.Errorf("%w: the %s signature does not match (is webhooks.clientSecret the app's?)", changehook.ErrRefused, r.Header.Get(SignatureVersionHeader))
	}
	return nil
}
