package state

import (
	"strings"
	"testing"
	"time"
)

func FuzzLinkCodec(f *testing.F) {
	f.Add("c1", "r1", "wh", "sh", int64(0), int64(1770000000000000000), "firstName", "Ada", "emails.work", "i1")
	f.Add("", "", "", "", int64(-1), int64(1), "", "", "", "")
	f.Add("CT\x00", "ü", "x", "y", int64(42), int64(-42), "k", "", "", "")
	f.Add("c1", "r1", strings.Repeat("ab", 32), strings.Repeat("ab", 32), int64(5), int64(0), "emails.work", "a@b.c", "phoneNumbers.", "i2")
	f.Add("c1", "", strings.Repeat("0f", 32), strings.Repeat("AB", 32), int64(5), int64(0), "custom.x", "1", "sourceUrl", "u")
	f.Fuzz(func(t *testing.T, contact, record, wh, sh string, t1, t2 int64, fk, fv, ik, iv string) {
		l := Link{
			ContactID: contact, RecordID: record, WorkspaceHash: wh, SourceHash: sh,
			WorkspaceWrittenAt: fromNanos(t1), SourceUpdatedAt: fromNanos(t2),
			Fields: map[string]string{fk: fv}, ItemIDs: map[string]string{ik: iv},
		}
		if len(contact) > 0 {
			l.Fingerprint[0], l.Fingerprint[7] = contact[0], 1
		}
		raw := encodeLink(l)
		var got Link
		if err := decodeLinkValue(raw, &got); err != nil {
			t.Fatalf("decode of an encoded link: %v", err)
		}
		if !sameLink(got, l) {
			t.Fatalf("round trip: %+v, want %+v", got, l)
		}
		d, err := decodeDigest(raw)
		if err != nil || d != (LinkDigest{Found: true, RecordID: record, WorkspaceHash: wh, Fingerprint: l.Fingerprint}) {
			t.Fatalf("digest %+v, %v of %+v", d, err, l)
		}
		var old Link
		l.Fingerprint = [8]byte{}
		if err := decodeLinkValue(encodeLinkV1(l), &old); err != nil || !sameLink(old, l) {
			t.Fatalf("format 1: %+v, %v, want %+v", old, err, l)
		}
		// Any prefix or corruption decodes to an error or a link, never a panic.
		for i := range raw {
			var x Link
			_ = decodeLinkValue(raw[:i], &x)
			bad := append([]byte{}, raw...)
			bad[i] ^= 0x80
			_ = decodeLinkValue(bad, &x)
		}
	})
}

func TestLinkCodecIsDeterministic(t *testing.T) {
	l := Link{ContactID: "c", Fields: map[string]string{"b": "2", "a": "1", "c": "3"},
		SourceWrittenAt: time.Unix(1, 2)}
	first := string(encodeLink(l))
	for range 20 {
		if string(encodeLink(l)) != first {
			t.Fatal("encoding depends on map order")
		}
	}
	var x Link
	if err := decodeLinkValue([]byte(first+"x"), &x); err == nil {
		t.Error("trailing bytes accepted")
	}
	if err := decodeLinkValue([]byte{9}, &x); err == nil {
		t.Error("unknown format accepted")
	}
}
