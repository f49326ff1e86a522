package signature

import (
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary headers and bodies to Verify (seed corpus in
// testdata/fuzz/FuzzVerify). Properties: it never panics, it returns one of
// its documented errors, it accepts a delivery only when one of its v1
// entries (or its legacy header) is the true signature, and what Sign
// produces for the fuzzed id and body always verifies.
func FuzzVerify(f *testing.F) {
	f.Fuzz(func(t *testing.T, id, ts, sig, legacy string, body []byte) {
		h := http.Header{}
		if id != "" {
			h.Set(HeaderID, id)
		}
		if ts != "" {
			h.Set(HeaderTimestamp, ts)
		}
		if sig != "" {
			h.Set(HeaderSignature, sig)
		}
		if legacy != "" {
			h.Set(HeaderLegacy, legacy)
		}
		v := &Verifier{Secrets: []string{otherSecret, vecSecret}, Legacy: true, Now: func() time.Time { return vecTime }}
		err := v.Verify(h, body)
		known := []error{ErrNoSignature, ErrMalformed, ErrBadSignature, ErrStaleTimestamp}
		if err != nil && !isOneOf(err, known) {
			t.Fatalf("Verify returned an undocumented error: %v", err)
		}
		if err == nil || errors.Is(err, ErrStaleTimestamp) {
			if !authentic(h, body) {
				t.Fatalf("Verify accepted (%v) a delivery no secret signed: %v", err, h)
			}
		}

		// Round trip with the fuzzed id and body.
		if id == "" || strings.TrimSpace(id) != id {
			return
		}
		good, err := SignHeaders(vecSecret, id, vecTime, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(good, body); err != nil {
			t.Fatalf("Verify(SignHeaders(%q)) = %v", id, err)
		}
		tampered := append(append([]byte{}, body...), 'x')
		if err := v.Verify(good, tampered); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("Verify of a tampered body = %v, want ErrBadSignature", err)
		}
	})
}

// authentic recomputes, independently of Verify's parsing, whether h
// carries a true signature of body by one of the fuzz secrets.
func authentic(h http.Header, body []byte) bool {
	for _, secret := range []string{otherSecret, vecSecret} {
		// Like Verify, a header of white space only is no header.
		if sig := strings.TrimSpace(h.Get(HeaderSignature)); sig != "" {
			id, ts := strings.TrimSpace(h.Get(HeaderID)), strings.TrimSpace(h.Get(HeaderTimestamp))
			var sec int64
			for _, c := range ts {
				sec = sec*10 + int64(c-'0')
			}
			want, err := Sign(secret, id, time.Unix(sec, 0), body)
			if err != nil {
				return false
			}
			for _, e := range strings.Fields(sig) {
				if hmac.Equal([]byte(e), []byte(want)) {
					return true
				}
			}
			continue
		}
		parts := strings.Split(strings.TrimSpace(h.Get(HeaderLegacy)), ";")
		if len(parts) != 4 {
			return false
		}
		key, _ := DecodeSecret(secret)
		ms := parts[2]
		if hmac.Equal([]byte(parts[3]), []byte(base64.StdEncoding.EncodeToString(legacyMAC(key, ms, body)))) {
			return true
		}
	}
	return false
}

func isOneOf(err error, targets []error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
