package state

import (
	"encoding/binary"
	"errors"
	"slices"
)

// Links are the hottest values (one read per source record per run, up to
// millions), so they are stored in a compact binary form rather than
// JSON: a format byte, then ContactID, RecordID, WorkspaceHash and
// SourceHash as length-prefixed strings, the four times as varint Unix
// nanoseconds (0 for the zero time), and Fields and ItemIDs as a count
// followed by key/value strings in key order. Lengths and counts are
// uvarints. Connector, externalID and LastSeenRun are not in the value.
const linkFormat1 = 1

var errLinkFormat = errors.New("malformed link value")

func encodeLink(l Link) []byte {
	// Capacity: the strings plus a varint for every length, time and count.
	n := 1 + 10*binary.MaxVarintLen64 +
		len(l.ContactID) + len(l.RecordID) + len(l.WorkspaceHash) + len(l.SourceHash)
	for _, m := range []map[string]string{l.Fields, l.ItemIDs} {
		for k, v := range m {
			n += len(k) + len(v) + 2*binary.MaxVarintLen64
		}
	}
	b := make([]byte, 0, n)
	b = append(b, linkFormat1)
	for _, s := range []string{l.ContactID, l.RecordID, l.WorkspaceHash, l.SourceHash} {
		b = appendString(b, s)
	}
	for _, t := range []int64{nanos(l.WorkspaceWrittenAt), nanos(l.SourceWrittenAt),
		nanos(l.ContactUpdatedAt), nanos(l.SourceUpdatedAt)} {
		b = binary.AppendVarint(b, t)
	}
	b = appendMap(b, l.Fields)
	b = appendMap(b, l.ItemIDs)
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendMap(b []byte, m map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = appendString(b, k)
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

func (d *linkDecoder) stringMap() map[string]string {
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
		k := d.string()
		m[k] = d.string()
	}
	return m
}

// decodeLinkValue fills l (but Connector, ExternalID and LastSeenRun) from
// a value written by encodeLink.
func decodeLinkValue(raw []byte, l *Link) error {
	if len(raw) == 0 || raw[0] != linkFormat1 {
		return errLinkFormat
	}
	d := linkDecoder{b: raw[1:]}
	l.ContactID = d.string()
	l.RecordID = d.string()
	l.WorkspaceHash = d.string()
	l.SourceHash = d.string()
	l.WorkspaceWrittenAt = fromNanos(d.varint())
	l.SourceWrittenAt = fromNanos(d.varint())
	l.ContactUpdatedAt = fromNanos(d.varint())
	l.SourceUpdatedAt = fromNanos(d.varint())
	l.Fields = d.stringMap()
	l.ItemIDs = d.stringMap()
	if d.err == nil && len(d.b) != 0 {
		d.err = errLinkFormat
	}
	return d.err
}
