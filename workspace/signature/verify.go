package signature

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Verifier checks the signature of incoming deliveries.
type Verifier struct {
	// Secrets are the subscription's signing secrets, "whsec_" prefixed or
	// not. A delivery is authentic when any one of them signed it: after a
	// rotation, keep the old and the new one until the old stops signing.
	Secrets []string
	// Tolerance is how far the delivery's timestamp may be from Now, in
	// either direction; zero or less means DefaultTolerance (5 minutes).
	Tolerance time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Legacy also accepts the older single-header scheme when a delivery
	// carries no Standard Webhooks signature.
	Legacy bool
}

// Verify returns nil when body, with its headers h, was signed by one of
// the secrets at a time within the tolerance. The errors wrap ErrNoSignature,
// ErrMalformed, ErrBadSignature, ErrStaleTimestamp or ErrBadSecret. The
// timestamp is checked only once a signature matched, so a stale error
// means an authentic but old (replayed or skewed) delivery.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	keys, err := v.keys()
	if err != nil {
		return err
	}
	sig := headerValue(h, HeaderSignature)
	if sig == "" {
		if legacy := headerValue(h, HeaderLegacy); v.Legacy && legacy != "" {
			return v.verifyLegacy(legacy, body, keys)
		}
		return ErrNoSignature
	}
	id := headerValue(h, HeaderID)
	tsText := headerValue(h, HeaderTimestamp)
	if id == "" || tsText == "" {
		return fmt.Errorf("%w: %s and %s are required", ErrMalformed, HeaderID, HeaderTimestamp)
	}
	sec, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || !digits(tsText) {
		return fmt.Errorf("%w: timestamp %q is not Unix seconds", ErrMalformed, tsText)
	}
	if !hasEntry(sig) {
		return fmt.Errorf("%w: no <version>,<signature> entry", ErrMalformed)
	}
	// The library reads the canonical header names; hand it exactly the
	// values parsed above.
	canon := http.Header{}
	canon.Set(HeaderID, id)
	canon.Set(HeaderTimestamp, tsText)
	canon.Set(HeaderSignature, sig)
	matched := false
	for _, key := range keys {
		wh, err := standardwebhooks.NewWebhookRaw(key)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		// Every secret is tried even after a match, so that the time taken
		// does not tell which one matched.
		switch err := wh.VerifyIgnoringTimestamp(body, canon); {
		case err == nil:
			matched = true
		case errors.Is(err, standardwebhooks.ErrNoMatchingSignature):
		default:
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	if !matched {
		return ErrBadSignature
	}
	return v.checkTime(time.Unix(sec, 0))
}

// keys decodes the secrets.
func (v *Verifier) keys() ([][]byte, error) {
	if len(v.Secrets) == 0 {
		return nil, fmt.Errorf("%w: no secret configured", ErrBadSecret)
	}
	keys := make([][]byte, 0, len(v.Secrets))
	for i, s := range v.Secrets {
		k, err := DecodeSecret(s)
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// checkTime refuses a timestamp more than the tolerance from the clock.
func (v *Verifier) checkTime(ts time.Time) error {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	tol := v.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	d := now().Sub(ts)
	if d > tol || -d > tol {
		return fmt.Errorf("%w: %s from the clock", ErrStaleTimestamp, d.Round(time.Second))
	}
	return nil
}

// digits reports whether s is a non-empty run of ASCII digits (no sign).
func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// hasEntry reports whether sig holds at least one "<version>,<signature>"
// entry with both parts present.
func hasEntry(sig string) bool {
	for _, e := range strings.Fields(sig) {
		if ver, s, ok := strings.Cut(e, ","); ok && ver != "" && s != "" {
			return true
		}
	}
	return false
}

// headerValue returns the values of header name, found case-insensitively
// (receivers sometimes build headers by hand with lower-case keys), joined
// by spaces when the header was sent more than once.
func headerValue(h http.Header, name string) string {
	if vs := h.Values(name); len(vs) > 0 {
		return strings.TrimSpace(strings.Join(vs, " "))
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return strings.TrimSpace(strings.Join(vs, " "))
		}
	}
	return ""
}
