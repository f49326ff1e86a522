// Package signature signs and verifies the workspace's webhook deliveries.
//
// The current scheme is Standard Webhooks (https://www.standardwebhooks.com):
// three headers, webhook-id, webhook-timestamp (Unix seconds) and
// webhook-signature (space-separated "v1,<base64>" entries, any one of which
// may match), over the content "<id>.<timestamp>.<raw body>" with
// HMAC-SHA256 keyed by the base64-decoded secret after its "whsec_" prefix.
// The HMAC itself is the maintained library's
// (github.com/standard-webhooks/standard-webhooks/libraries/go); this
// package adds what a receiver needs around it: several secrets at once
// (old and new after a rotation), an injectable clock, typed errors that a
// receiver maps to 400 or 401, and the older single-header scheme
// ("openphone-signature: hmac;1;<ms>;<base64>") for users who migrate.
package signature

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Header names of the two schemes.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	// HeaderLegacy is the single header of the older generation of
	// webhooks: "hmac;1;<timestamp in ms>;<base64 signature>".
	HeaderLegacy = "openphone-signature"
)

// SecretPrefix starts every signing secret the service hands out.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, in either direction.
const DefaultTolerance = 5 * time.Minute

// secretBytes is the length of a generated secret's key.
const secretBytes = 24

// Errors of Verify. A receiver answers ErrMalformed with 400 and the others
// with 401; ErrBadSecret is the receiver's own configuration error.
var (
	// ErrNoSignature: the request carries no signature header at all.
	ErrNoSignature = errors.New("no webhook signature")
	// ErrMalformed: signature headers are present but unreadable (missing
	// id or timestamp, a timestamp that is not an integer, no entry of
	// the form "<version>,<signature>").
	ErrMalformed = errors.New("malformed webhook signature headers")
	// ErrBadSignature: no signature matches any of the secrets.
	ErrBadSignature = errors.New("webhook signature does not match")
	// ErrStaleTimestamp: the signature matches but its timestamp is more
	// than the tolerance away from the clock (a replay, or a skewed clock).
	ErrStaleTimestamp = errors.New("webhook timestamp outside tolerance")
	// ErrBadSecret: a configured secret is not valid base64.
	ErrBadSecret = errors.New("invalid webhook secret")
)

// DecodeSecret returns the HMAC key of a secret given with or without its
// "whsec_" prefix.
func DecodeSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// NewSecret returns a fresh "whsec_" secret of 24 random bytes read from r
// (crypto/rand when r is nil).
func NewSecret(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	b := make([]byte, secretBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("new secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// Sign returns the webhook-signature header value ("v1,<base64>") of body
// sent as message msgID at ts, signed with secret.
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	if _, err := DecodeSecret(secret); err != nil {
		return "", err
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return "", ErrBadSecret
	}
	sig, err := wh.Sign(msgID, ts, body)
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	return sig, nil
}

// SignHeaders returns the three Standard Webhooks headers of a delivery.
// With more than one secret (during a rotation) the signature header holds
// one entry per secret, space-separated, in the order given.
func SignHeaders(secret, msgID string, ts time.Time, body []byte, more ...string) (http.Header, error) {
	sigs := make([]string, 0, 1+len(more))
	for _, s := range append([]string{secret}, more...) {
		sig, err := Sign(s, msgID, ts, body)
		if err != nil {
			return nil, err
		}
		sigs = append(sigs, sig)
	}
	h := http.Header{}
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return h, nil
}
