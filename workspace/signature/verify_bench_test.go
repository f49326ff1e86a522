package signature

import (
	"bytes"
	"testing"
	"time"
)

// benchBody is a contact.updated delivery of realistic size (~1.5 KiB).
var benchBody = []byte(`{"id":"EVa1b2c3d4e5f60718","object":"event","apiVersion":"2026-03-30","createdAt":"2026-03-30T12:00:00.000Z",` +
	`"type":"contact.updated","data":{"object":{},"resource":{"id":"CT0123456789abcdef","externalId":"crm-000042",` +
	`"source":"custom-crm","sourceUrl":"https://crm.example.com/contacts/42","defaultFields":{"company":"Analytical Engines Ltd",` +
	`"firstName":"Ada","lastName":"Lovelace","role":"Engineer","emails":[{"id":"IT01","name":"work","value":"ada@example.com"}],` +
	`"phoneNumbers":[{"id":"IT02","name":"mobile","value":"+14155550100"}]},"customFields":[{"name":"Lifecycle","key":"lifecycle",` +
	`"id":"CF01","type":"multi-select","value":["customer","vip"]}],"createdAt":"2026-01-01T00:00:00.000Z",` +
	`"updatedAt":"2026-03-30T12:00:00.000Z","createdByUserId":"US0001","updatedByUserId":"US0002"}}}` +
	string(bytes.Repeat([]byte(" "), 512)))

// BenchmarkVerify is the receiver's check of one delivery with one
// secret: header parsing, key decoding and an HMAC-SHA256 of the body.
func BenchmarkVerify(b *testing.B) {
	benchVerify(b, []string{vecSecret})
}

// BenchmarkVerifyDuringRotation checks against two secrets, the old one
// first, as during a rotation's grace period.
func BenchmarkVerifyDuringRotation(b *testing.B) {
	benchVerify(b, []string{otherSecret, vecSecret})
}

func benchVerify(b *testing.B, secrets []string) {
	now := time.Unix(1770000000, 0)
	h, err := SignHeaders(vecSecret, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", now, benchBody)
	if err != nil {
		b.Fatal(err)
	}
	v := &Verifier{Secrets: secrets, Now: func() time.Time { return now }}
	b.SetBytes(int64(len(benchBody)))
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Verify(h, benchBody); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyRefused is a forged delivery: every secret is tried.
func BenchmarkVerifyRefused(b *testing.B) {
	now := time.Unix(1770000000, 0)
	h, err := SignHeaders(otherSecret, "msg_forged", now, benchBody)
	if err != nil {
		b.Fatal(err)
	}
	v := &Verifier{Secrets: []string{vecSecret}, Now: func() time.Time { return now }}
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Verify(h, benchBody); err == nil {
			b.Fatal("forged delivery accepted")
		}
	}
}
