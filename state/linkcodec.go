package state

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
)

// Links are the hottest values (one read per source record per run, up to
// millions), so they are stored in a compact binary form rather than
// JSON. Connector and externalID are not in the value.
//
// Format 1 (read only, migrated at start-up): a format byte, then
// ContactID, RecordID, WorkspaceHash and SourceHash as length-prefixed
// strings, the four times as varint Unix nanoseconds (0 for the zero
// time), and Fields and ItemIDs as a count followed by key/value strings
// in key order. Lengths and counts are uvarints.
//
// Format 2 puts first what the forward pass reads for every record (see
// LinkDigest), so that an unchanged record costs a short prefix decode:
// the format byte; a flags byte; the 8-byte Fingerprint when set; the
// WorkspaceHash as its 32 raw bytes when it is a lower-case hex SHA-256
// digest (as mapping.Fields.Hash writes it), else as a string; the
// SourceHash likewise, or nothing when it equals the WorkspaceHash; the
// RecordID and ContactID strings; the four times; LastSeenRun as a
// uvarint; Fields and ItemIDs with
// their keys packed (a code for the targets every mapping uses, the label
// after it for emails., phoneNumbers. and custom.).
const (
	linkFormat1 = 1
	linkFormat2 = 2
)

// Format 2 flags.
const (
	flagFingerprint  = 1 << iota // an 8-byte fingerprint follows
	flagWorkspaceRaw             // the workspace hash is 32 raw bytes
	flagSourceSame               // the source hash equals the workspace hash
	flagSourceRaw                // the source hash is 32 raw bytes
	flagsKnown       = flagFingerprint | flagWorkspaceRaw | flagSourceSame | flagSourceRaw
)

// keyCodes pack the keys of Fields and ItemIDs: code 0 is followed by the
// whole key, a code of a prefix by the rest of the key, a code of a whole
// key by nothing. Append, never reorder: stored links carry the codes.
var keyCodes = []struct {
	text   string
	prefix bool
}{
	{}, // 0: literal
	{"firstName", false}, {"lastName", false}, {"company", false}, {"role", false},
	{"sourceUrl", false},
	{"emails.", true}, {"phoneNumbers.", true}, {"custom.", true},
}

var errLinkFormat = errors.New("malformed link value")

func encodeLink(l Link) []byte {
	// Capacity: the strings plus a varint for every length, time and count.
	n := 2 + len(l.Fingerprint) + 10*binary.MaxVarintLen64 +
		len(l.ContactID) + len(l.RecordID) + len(l.WorkspaceHash) + len(l.SourceHash)
	for _, m := range []map[string]string{l.Fields, l.ItemIDs} {
		for k, v := range m {
			n += len(k) + len(v) + 2*binary.MaxVarintLen64
		}
	}
	b := make([]byte, 0, n)
	var flags byte
	if l.Fingerprint != ([8]byte{}) {
		flags |= flagFingerprint
	}
	wraw, wok := rawHash(l.WorkspaceHash)
	if wok {
		flags |= flagWorkspaceRaw
	}
	sraw, sok := rawHash(l.SourceHash)
	switch {
	case l.SourceHash == l.WorkspaceHash:
		flags |= flagSourceSame
	case sok:
		flags |= flagSourceRaw
	}
	b = append(b, linkFormat2, flags)
	if flags&flagFingerprint != 0 {
		b = append(b, l.Fingerprint[:]...)
	}
	if wok {
		b = append(b, wraw[:]...)
	} else {
		b = appendString(b, l.WorkspaceHash)
	}
	switch {
	case flags&flagSourceSame != 0:
	case sok:
		b = append(b, sraw[:]...)
	default:
		b = appendString(b, l.SourceHash)
	}
	b = appendString(b, l.RecordID)
	b = appendString(b, l.ContactID)
	for _, t := range []int64{nanos(l.WorkspaceWrittenAt), nanos(l.SourceWrittenAt),
		nanos(l.ContactUpdatedAt), nanos(l.SourceUpdatedAt)} {
		b = binary.AppendVarint(b, t)
	}
	b = binary.AppendUvarint(b, l.LastSeenRun)
	b = appendMap(b, l.Fields, true)
	b = appendMap(b, l.ItemIDs, true)
	return b
}

// rawHash returns the 32 bytes of a lower-case hex SHA-256 digest; ok
// false for anything else (which is then stored as a string).
func rawHash(s string) (raw [32]byte, ok bool) {
	if len(s) != 64 {
		return raw, false
	}
	for i := 0; i < 64; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return raw, false
		}
	}
	_, err := hex.Decode(raw[:], []byte(s))
	return raw, err == nil
}

// appendKey writes a Fields or ItemIDs key in its packed form.
func appendKey(b []byte, k string) []byte {
	for code := 1; code < len(keyCodes); code++ {
		c := keyCodes[code]
		if !c.prefix && k == c.text {
			return append(b, byte(code))
		}
		if c.prefix && strings.HasPrefix(k, c.text) {
			return appendString(append(b, byte(code)), k[len(c.text):])
		}
	}
	return appendString(append(b, 0), k)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendMap(b []byte, m map[string]string, packed bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if packed {
			b = appendKey(b, k)
		} else {
			b = appendString(b, k)
		}
		b = appendString(b, m[k])
	}
	return b
}

// linkDecoder reads a value written by encodeLink; the first error sticks.
type linkDecoder struct {
	b   []byte
	err error
}

func (d *linkDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errLinkFormat
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *linkDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errLinkFormat
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *linkDecoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = errLinkFormat
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// bytes reads n raw bytes (nil after an error).
func (d *linkDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errLinkFormat
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// hash reads a hash written raw (32 bytes) or as a string.
func (d *linkDecoder) hash(raw bool) string {
	if !raw {
		return d.string()
	}
	return hex.EncodeToString(d.bytes(32))
}

// key reads a key written by appendKey.
func (d *linkDecoder) key() string {
	code := d.bytes(1)
	if d.err != nil {
		return ""
	}
	switch c := int(code[0]); {
	case c == 0:
		return d.string()
	case c >= len(keyCodes):
		d.err = errLinkFormat
		return ""
	case keyCodes[c].prefix:
		return keyCodes[c].text + d.string()
	default:
		return keyCodes[c].text
	}
}

func (d *linkDecoder) stringMap(packed bool) map[string]string {
	n := d.uvarint()
	if d.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(d.b))/2 { // each pair takes at least two bytes
		d.err = errLinkFormat
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		var k string
		if packed {
			k = d.key()
		} else {
			k = d.string()
		}
		m[k] = d.string()
	}
	return m
}

// decodeLinkValue fills l (but Connector and ExternalID, and LastSeenRun
// from format 1, which kept it apart) from a value written by encodeLink,
// in either format.
func decodeLinkValue(raw []byte, l *Link) error {
	if len(raw) == 0 {
		return errLinkFormat
	}
	d := linkDecoder{b: raw[1:]}
	switch raw[0] {
	case linkFormat1:
		l.ContactID = d.string()
		l.RecordID = d.string()
		l.WorkspaceHash = d.string()
		l.SourceHash = d.string()
	case linkFormat2:
		d.head(l)
		l.ContactID = d.string()
	default:
		return errLinkFormat
	}
	l.WorkspaceWrittenAt = fromNanos(d.varint())
	l.SourceWrittenAt = fromNanos(d.varint())
	l.ContactUpdatedAt = fromNanos(d.varint())
	l.SourceUpdatedAt = fromNanos(d.varint())
	if raw[0] == linkFormat2 {
		l.LastSeenRun = d.uvarint()
	}
	l.Fields = d.stringMap(raw[0] == linkFormat2)
	l.ItemIDs = d.stringMap(raw[0] == linkFormat2)
	if d.err == nil && len(d.b) != 0 {
		d.err = errLinkFormat
	}
	return d.err
}

// head reads the start of a format 2 value: flags, fingerprint, hashes
// and RecordID.
func (d *linkDecoder) head(l *Link) {
	flags := d.bytes(1)
	if d.err != nil {
		return
	}
	f := flags[0]
	if f&^flagsKnown != 0 || f&flagSourceSame != 0 && f&flagSourceRaw != 0 {
		d.err = errLinkFormat
		return
	}
	if f&flagFingerprint != 0 {
		copy(l.Fingerprint[:], d.bytes(8))
	}
	l.WorkspaceHash = d.hash(f&flagWorkspaceRaw != 0)
	if f&flagSourceSame != 0 {
		l.SourceHash = l.WorkspaceHash
	} else {
		l.SourceHash = d.hash(f&flagSourceRaw != 0)
	}
	l.RecordID = d.string()
}

// decodeDigest reads what LinkDigest holds from a value in either format,
// without the rest.
func decodeDigest(raw []byte) (LinkDigest, error) {
	if len(raw) == 0 {
		return LinkDigest{}, errLinkFormat
	}
	var l Link
	d := linkDecoder{b: raw[1:]}
	switch raw[0] {
	case linkFormat1:
		d.string() // ContactID
		l.RecordID = d.string()
		l.WorkspaceHash = d.string()
	case linkFormat2:
		d.head(&l)
	default:
		return LinkDigest{}, errLinkFormat
	}
	if d.err != nil {
		return LinkDigest{}, d.err
	}
	return LinkDigest{Found: true, RecordID: l.RecordID, WorkspaceHash: l.WorkspaceHash, Fingerprint: l.Fingerprint}, nil
}
