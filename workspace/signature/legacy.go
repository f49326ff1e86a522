package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// legacyPrefix starts the legacy header: scheme "hmac", version "1".
const legacyPrefix = "hmac;1;"

// SignLegacy returns the value of the legacy header
// ("hmac;1;<timestamp in ms>;<base64 HMAC-SHA256 of "<timestamp>.<body>">"),
// keyed by the base64-decoded secret (with or without "whsec_").
func SignLegacy(secret string, ts time.Time, body []byte) (string, error) {
	key, err := DecodeSecret(secret)
	if err != nil {
		return "", err
	}
	ms := strconv.FormatInt(ts.UnixMilli(), 10)
	return legacyPrefix + ms + ";" + base64.StdEncoding.EncodeToString(legacyMAC(key, ms, body)), nil
}

func legacyMAC(key []byte, ms string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(ms))
	m.Write([]byte("."))
	m.Write(body)
	return m.Sum(nil)
}

// parseLegacy splits a legacy header value into its timestamp (as sent,
// which is what was signed) and decoded signature.
func parseLegacy(v string) (ms string, ts time.Time, sig []byte, err error) {
	parts := strings.Split(strings.TrimSpace(v), ";")
	if len(parts) != 4 || parts[0] != "hmac" || parts[1] != "1" {
		return "", time.Time{}, nil, ErrMalformed
	}
	n, perr := strconv.ParseInt(parts[2], 10, 64)
	if perr != nil || !digits(parts[2]) {
		return "", time.Time{}, nil, ErrMalformed
	}
	sig, derr := base64.StdEncoding.Strict().DecodeString(parts[3])
	if derr != nil || len(sig) == 0 {
		return "", time.Time{}, nil, ErrMalformed
	}
	return parts[2], time.UnixMilli(n), sig, nil
}

// verifyLegacy checks a legacy header against every key.
func (v *Verifier) verifyLegacy(value string, body []byte, keys [][]byte) error {
	ms, ts, sig, err := parseLegacy(value)
	if err != nil {
		return err
	}
	matched := false
	for _, key := range keys {
		// hmac.Equal is constant-time; keep looping so the time taken does
		// not tell which secret matched.
		if hmac.Equal(sig, legacyMAC(key, ms, body)) {
			matched = true
		}
	}
	if !matched {
		return ErrBadSignature
	}
	return v.checkTime(ts)
}
