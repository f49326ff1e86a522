package signature

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The published Standard Webhooks test vector: the same values are in the
// spec's reference libraries' tests (go/webhook_test.go TestWebhookSign,
// python/tests/test_webhooks.py, php/tests/WebhookTest.php,
// java/.../TestScenario.validSigned) and in Svix's documentation.
const (
	vecSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTimestamp = 1614265330
	vecPayload   = `{"test": 2432232314}`
	vecSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	// vecLegacy is the legacy header for the same secret and payload at
	// vecTimestamp*1000 ms, computed outside this code with
	// printf '%s' '1614265330000.{"test": 2432232314}' |
	//   openssl dgst -sha256 -mac HMAC -macopt hexkey:31f290f6...da4b0 -binary | base64
	vecLegacy = "hmac;1;1614265330000;j+wpOlM243kLL2T5lyhupPXrFBP7jEiSBw4OT6h33lg="
	// otherSecret is a second, unrelated secret (rotation tests).
	otherSecret = "whsec_c2Vjb25kLXNlY3JldC1mb3Itcm90YXRpb24tdGVzdHM="
)

var vecTime = time.Unix(vecTimestamp, 0)

func TestSignPublishedVector(t *testing.T) {
	for _, secret := range []string{vecSecret, strings.TrimPrefix(vecSecret, SecretPrefix)} {
		got, err := Sign(secret, vecMsgID, vecTime, []byte(vecPayload))
		if err != nil {
			t.Fatal(err)
		}
		if got != vecSignature {
			t.Errorf("Sign(%q) = %q, want %q", secret, got, vecSignature)
		}
	}
}

func TestSignLegacyVector(t *testing.T) {
	for _, secret := range []string{vecSecret, strings.TrimPrefix(vecSecret, SecretPrefix)} {
		got, err := SignLegacy(secret, vecTime, []byte(vecPayload))
		if err != nil {
			t.Fatal(err)
		}
		if got != vecLegacy {
			t.Errorf("SignLegacy(%q) = %q, want %q", secret, got, vecLegacy)
		}
	}
}

func TestSignHeaders(t *testing.T) {
	h, err := SignHeaders(vecSecret, vecMsgID, vecTime, []byte(vecPayload), otherSecret)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get(HeaderID) != vecMsgID || h.Get(HeaderTimestamp) != "1614265330" {
		t.Errorf("headers = %v", h)
	}
	entries := strings.Fields(h.Get(HeaderSignature))
	if len(entries) != 2 || entries[0] != vecSignature {
		t.Fatalf("signature header = %q, want the vector first and a second entry", h.Get(HeaderSignature))
	}
	// Each entry alone verifies against its own secret.
	for i, secret := range []string{vecSecret, otherSecret} {
		one := h.Clone()
		one.Set(HeaderSignature, entries[i])
		v := &Verifier{Secrets: []string{secret}, Now: func() time.Time { return vecTime }}
		if err := v.Verify(one, []byte(vecPayload)); err != nil {
			t.Errorf("entry %d with its secret: %v", i, err)
		}
	}
}

func TestSignBadSecret(t *testing.T) {
	for _, secret := range []string{"", "whsec_", "whsec_not*base64", "%%%"} {
		if _, err := Sign(secret, vecMsgID, vecTime, nil); !errors.Is(err, ErrBadSecret) {
			t.Errorf("Sign(%q) err = %v, want ErrBadSecret", secret, err)
		}
		if _, err := SignLegacy(secret, vecTime, nil); !errors.Is(err, ErrBadSecret) {
			t.Errorf("SignLegacy(%q) err = %v, want ErrBadSecret", secret, err)
		}
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewSecret(nil)
	if a == b || !strings.HasPrefix(a, SecretPrefix) {
		t.Fatalf("secrets %q %q: want distinct whsec_ values", a, b)
	}
	if k, err := DecodeSecret(a); err != nil || len(k) != secretBytes {
		t.Fatalf("DecodeSecret(%q) = %d bytes, %v", a, len(k), err)
	}
	// A fixed reader gives a fixed secret (the emulator's seeded secrets).
	x, _ := NewSecret(bytes.NewReader(make([]byte, secretBytes)))
	if x != "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" {
		t.Errorf("NewSecret(zeros) = %q", x)
	}
	if _, err := NewSecret(bytes.NewReader(nil)); err == nil {
		t.Error("NewSecret(empty reader) succeeded")
	}
}

// vectorHeaders are the published vector's headers.
func vectorHeaders() http.Header {
	h := http.Header{}
	h.Set(HeaderID, vecMsgID)
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, vecSignature)
	return h
}

func TestVerify(t *testing.T) {
	at := func(d time.Duration) func() time.Time { return func() time.Time { return vecTime.Add(d) } }
	with := func(mod func(h http.Header)) http.Header {
		h := vectorHeaders()
		mod(h)
		return h
	}
	tests := []struct {
		name    string
		v       Verifier
		h       http.Header
		body    string
		wantErr error
	}{
		{name: "published vector", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)}, h: vectorHeaders(), body: vecPayload},
		{name: "secret without prefix", v: Verifier{Secrets: []string{strings.TrimPrefix(vecSecret, SecretPrefix)}, Now: at(0)}, h: vectorHeaders(), body: vecPayload},
		{name: "rotation: new secret first, old one signed", v: Verifier{Secrets: []string{otherSecret, vecSecret}, Now: at(0)}, h: vectorHeaders(), body: vecPayload},
		{name: "rotation: only the other secret", v: Verifier{Secrets: []string{otherSecret}, Now: at(0)}, h: vectorHeaders(), body: vecPayload, wantErr: ErrBadSignature},
		{name: "several signatures, the matching one last", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) {
				h.Set(HeaderSignature, "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,abc "+vecSignature)
			}), body: vecPayload},
		{name: "signature header sent twice", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) {
				h.Set(HeaderSignature, "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=")
				h.Add(HeaderSignature, vecSignature)
			}), body: vecPayload},
		{name: "mixed-case hand-built header keys", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: http.Header{"webhook-id": {vecMsgID}, "WEBHOOK-TIMESTAMP": {"1614265330"}, "webhook-SIGNATURE": {vecSignature}}, body: vecPayload},
		{name: "tampered body", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)}, h: vectorHeaders(), body: `{"test": 2432232315}`, wantErr: ErrBadSignature},
		{name: "tampered id", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderID, "msg_other") }), body: vecPayload, wantErr: ErrBadSignature},
		{name: "tampered timestamp", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderTimestamp, "1614265331") }), body: vecPayload, wantErr: ErrBadSignature},
		{name: "wrong version only", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderSignature, "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") }), body: vecPayload, wantErr: ErrBadSignature},
		{name: "invalid signature value", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderSignature, "v1,invalid_signature") }), body: vecPayload, wantErr: ErrBadSignature},
		{name: "partial signature", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderSignature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE") }), body: vecPayload, wantErr: ErrBadSignature},
		{name: "4m59s old", v: Verifier{Secrets: []string{vecSecret}, Now: at(4*time.Minute + 59*time.Second)}, h: vectorHeaders(), body: vecPayload},
		{name: "stale: 5m01s old", v: Verifier{Secrets: []string{vecSecret}, Now: at(5*time.Minute + time.Second)}, h: vectorHeaders(), body: vecPayload, wantErr: ErrStaleTimestamp},
		{name: "future: 5m01s ahead", v: Verifier{Secrets: []string{vecSecret}, Now: at(-5*time.Minute - time.Second)}, h: vectorHeaders(), body: vecPayload, wantErr: ErrStaleTimestamp},
		{name: "custom tolerance", v: Verifier{Secrets: []string{vecSecret}, Now: at(2 * time.Minute), Tolerance: time.Minute}, h: vectorHeaders(), body: vecPayload, wantErr: ErrStaleTimestamp},
		{name: "stale and forged is a bad signature", v: Verifier{Secrets: []string{vecSecret}, Now: at(time.Hour)}, h: vectorHeaders(), body: "{}", wantErr: ErrBadSignature},
		{name: "no headers", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)}, h: http.Header{}, body: vecPayload, wantErr: ErrNoSignature},
		{name: "missing signature", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Del(HeaderSignature) }), body: vecPayload, wantErr: ErrNoSignature},
		{name: "missing id", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Del(HeaderID) }), body: vecPayload, wantErr: ErrMalformed},
		{name: "missing timestamp", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Del(HeaderTimestamp) }), body: vecPayload, wantErr: ErrMalformed},
		{name: "timestamp not an integer", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderTimestamp, "161426533.0") }), body: vecPayload, wantErr: ErrMalformed},
		{name: "negative timestamp", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderTimestamp, "-161426533") }), body: vecPayload, wantErr: ErrMalformed},
		{name: "signature without version separator", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: with(func(h http.Header) { h.Set(HeaderSignature, "invalid_signature") }), body: vecPayload, wantErr: ErrMalformed},
		{name: "no secret configured", v: Verifier{Now: at(0)}, h: vectorHeaders(), body: vecPayload, wantErr: ErrBadSecret},
		{name: "undecodable secret", v: Verifier{Secrets: []string{vecSecret, "whsec_***"}, Now: at(0)}, h: vectorHeaders(), body: vecPayload, wantErr: ErrBadSecret},
		{name: "legacy header ignored unless enabled", v: Verifier{Secrets: []string{vecSecret}, Now: at(0)},
			h: http.Header{"Openphone-Signature": {vecLegacy}}, body: vecPayload, wantErr: ErrNoSignature},
		{name: "legacy vector", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {vecLegacy}}, body: vecPayload},
		{name: "legacy, secret without prefix, old secret second", v: Verifier{Secrets: []string{otherSecret, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, Now: at(0), Legacy: true},
			h: http.Header{"openphone-signature": {vecLegacy}}, body: vecPayload},
		{name: "legacy tampered body", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {vecLegacy}}, body: `{"test": 1}`, wantErr: ErrBadSignature},
		{name: "legacy tampered timestamp", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {strings.Replace(vecLegacy, "1614265330000", "1614265330001", 1)}}, body: vecPayload, wantErr: ErrBadSignature},
		{name: "legacy stale", v: Verifier{Secrets: []string{vecSecret}, Now: at(6 * time.Minute), Legacy: true},
			h: http.Header{"Openphone-Signature": {vecLegacy}}, body: vecPayload, wantErr: ErrStaleTimestamp},
		{name: "legacy wrong scheme", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {strings.Replace(vecLegacy, "hmac;1;", "hmac;2;", 1)}}, body: vecPayload, wantErr: ErrMalformed},
		{name: "legacy missing part", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {"hmac;1;1614265330000"}}, body: vecPayload, wantErr: ErrMalformed},
		{name: "legacy timestamp in seconds text", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {"hmac;1;abc;j+wpOlM243kLL2T5lyhupPXrFBP7jEiSBw4OT6h33lg="}}, body: vecPayload, wantErr: ErrMalformed},
		{name: "legacy signature not base64", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: http.Header{"Openphone-Signature": {"hmac;1;1614265330000;!!!"}}, body: vecPayload, wantErr: ErrMalformed},
		{name: "standard headers win over legacy", v: Verifier{Secrets: []string{vecSecret}, Now: at(0), Legacy: true},
			h: with(func(h http.Header) { h.Set(HeaderLegacy, "garbage") }), body: vecPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Verify(tt.h, []byte(tt.body))
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Verify: %v, want success", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Verify: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestVerifyDefaultsClock checks that a fresh signature verifies with the
// real clock and default tolerance.
func TestVerifyDefaultsClock(t *testing.T) {
	now := time.Now()
	h, err := SignHeaders(vecSecret, "msg_1", now, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Verifier{Secrets: []string{vecSecret}}).Verify(h, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	old, _ := SignHeaders(vecSecret, "msg_1", now.Add(-10*time.Minute), []byte("{}"))
	if err := (&Verifier{Secrets: []string{vecSecret}}).Verify(old, []byte("{}")); !errors.Is(err, ErrStaleTimestamp) {
		t.Fatalf("10 minutes old: %v, want ErrStaleTimestamp", err)
	}
	lh, _ := SignLegacy(vecSecret, now, []byte("{}"))
	if err := (&Verifier{Secrets: []string{vecSecret}, Legacy: true}).Verify(http.Header{"Openphone-Signature": {lh}}, []byte("{}")); err != nil {
		t.Fatal(err)
	}
}
