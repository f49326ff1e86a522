package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	bolt "go.etcd.io/bbolt"
)

// A connector's links live in three buckets. The links themselves are
// keyed by a sequence number assigned when the link is first stored: new
// links append at the end of the bucket, whose pages bbolt then fills
// nearly full instead of splitting them half full as random keys would.
// Their value is the externalID (length-prefixed) and the link in the
// binary form of linkcodec.go. Two small indexes find them: by externalID,
// and by contact ID, whose key is an 8-byte hash of the ID and the link's
// sequence number (a look-up reads the links under the hash and keeps the
// one that holds the contact; hashes that collide only cost a read).
var (
	subLinks    = []byte("links")    // seq(8) -> uvarint len + externalID + link value
	subIDs      = []byte("ids")      // externalID -> seq (uvarint)
	subContacts = []byte("contacts") // hash(contactID)(8) + seq (uvarint) -> nil

	// The buckets of schema version 1, read by the migration to 2.
	subExt     = []byte("ext")     // externalID -> link value
	subContact = []byte("contact") // contactID -> externalID
	subSeen    = []byte("seen")    // externalID -> run id (8 bytes)
)

// Fill percents: the links bucket gets appends (and rewrites in place),
// the indexes random keys, for which bbolt's default split is best.
const (
	linksFill    = 1.0
	idsFill      = 0.9                     // externalIDs often come in increasing order
	contactsFill = bolt.DefaultFillPercent // hashes: random
)

// linkBuckets are one connector's link buckets.
type linkBuckets struct{ links, ids, contacts *bolt.Bucket }

// readLinks returns the connector's buckets, ok false when it has none.
func readLinks(tx *bolt.Tx, connector string) (linkBuckets, bool) {
	c := tx.Bucket(bucketLinks).Bucket([]byte(connector))
	if c == nil {
		return linkBuckets{}, false
	}
	lb := linkBuckets{c.Bucket(subLinks), c.Bucket(subIDs), c.Bucket(subContacts)}
	return lb, lb.links != nil && lb.ids != nil && lb.contacts != nil
}

// writeLinks returns the connector's buckets, creating them.
func writeLinks(tx *bolt.Tx, connector string) (linkBuckets, error) {
	if err := checkName("connector", connector); err != nil {
		return linkBuckets{}, err
	}
	c, err := tx.Bucket(bucketLinks).CreateBucketIfNotExists([]byte(connector))
	if err != nil {
		return linkBuckets{}, err
	}
	return createLinkBuckets(c)
}

func createLinkBuckets(c *bolt.Bucket) (linkBuckets, error) {
	var lb linkBuckets
	var err error
	for _, sub := range []struct {
		name []byte
		b    **bolt.Bucket
		fill float64
	}{{subLinks, &lb.links, linksFill}, {subIDs, &lb.ids, idsFill}, {subContacts, &lb.contacts, contactsFill}} {
		if *sub.b, err = c.CreateBucketIfNotExists(sub.name); err != nil {
			return linkBuckets{}, err
		}
		(*sub.b).FillPercent = sub.fill
	}
	return lb, nil
}

// lookup returns the sequence number of externalID's link; ok false when
// there is none.
func (lb linkBuckets) lookup(externalID []byte) (seq uint64, ok bool) {
	v := lb.ids.Get(externalID)
	if v == nil {
		return 0, false
	}
	seq, n := binary.Uvarint(v)
	return seq, n == len(v) && seq > 0
}

// stored reads the value of link seq: its externalID and link value.
func (lb linkBuckets) stored(seq uint64) (ext, value []byte, ok bool) {
	raw := lb.links.Get(u64(seq))
	if raw == nil {
		return nil, nil, false
	}
	n, w := binary.Uvarint(raw)
	if w <= 0 || n > uint64(len(raw)-w) {
		return nil, raw, true // decodeLink reports it
	}
	return raw[w : w+int(n)], raw[w+int(n):], true
}

// get decodes the link of externalID; ok false when there is none.
func (lb linkBuckets) get(connector, externalID string) (Link, bool, error) {
	seq, ok := lb.lookup([]byte(externalID))
	if !ok {
		return Link{}, false, nil
	}
	ext, value, ok := lb.stored(seq)
	if !ok {
		return Link{}, false, fmt.Errorf("decode link %s/%s: %w: index names a missing link", connector, externalID, errLinkFormat)
	}
	if ext != nil && string(ext) != externalID {
		return Link{}, false, fmt.Errorf("decode link %s/%s: %w: index names link #%d, which holds externalID %q",
			connector, externalID, errLinkFormat, seq, ext)
	}
	l, err := decodeLink(connector, externalID, value, 0)
	return l, err == nil, err
}

// bySeq decodes link seq; ok false when there is none.
func (lb linkBuckets) bySeq(connector string, seq uint64) (Link, bool, error) {
	ext, value, ok := lb.stored(seq)
	if !ok {
		return Link{}, false, nil
	}
	if ext == nil {
		return Link{}, false, fmt.Errorf("decode link %s/#%d: %w", connector, seq, errLinkFormat)
	}
	l, err := decodeLink(connector, string(ext), value, 0)
	return l, err == nil, err
}

// decodeLink decodes a link value; run is its LastSeenRun when the value
// does not hold it (format 1).
func decodeLink(connector, externalID string, raw []byte, run uint64) (Link, error) {
	l := Link{Connector: connector, ExternalID: externalID, LastSeenRun: run}
	if err := decodeLinkValue(raw, &l); err != nil {
		return Link{}, fmt.Errorf("decode link %s/%s: %w", connector, externalID, err)
	}
	return l, nil
}

// storedValue is what the links bucket holds for l.
func storedValue(l Link) []byte {
	v := encodeLink(l)
	b := make([]byte, 0, binary.MaxVarintLen64+len(l.ExternalID)+len(v))
	b = appendString(b, l.ExternalID)
	return append(b, v...)
}

// contactKey is the contacts index key of (contactID, seq): the hash of
// the ID, then seq as a uvarint (the hash alone is ever sought).
func contactKey(contactID string, seq uint64) []byte {
	h := fnv.New64a()
	_, _ = h.Write([]byte(contactID))
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+binary.MaxVarintLen64), h.Sum64())
	return binary.AppendUvarint(k, seq)
}

// contactPrefix is the part of contact keys that contactID fixes.
func contactPrefix(contactID string) []byte { return contactKey(contactID, 0)[:8] }

// byContact returns the link that holds contactID; ok false when none.
// Index entries under the contact's hash whose link is gone or holds
// another contact are skipped (and returned as stale, for put to drop).
func (lb linkBuckets) byContact(connector, contactID string) (l Link, seq uint64, ok bool, stale [][]byte, err error) {
	prefix := contactPrefix(contactID)
	c := lb.contacts.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		s, n := binary.Uvarint(k[8:])
		if n <= 0 || n != len(k)-8 {
			stale = append(stale, append([]byte(nil), k...))
			continue
		}
		cand, found, err := lb.bySeq(connector, s)
		if err != nil {
			return Link{}, 0, false, nil, err
		}
		if found && cand.ContactID == contactID {
			// Every write keeps the externalID index and the links in
			// step: a link it does not name is a damaged file, not a
			// contact linked to another record.
			if at, indexed := lb.lookup([]byte(cand.ExternalID)); !indexed || at != s {
				return Link{}, 0, false, nil, fmt.Errorf("decode link %s/#%d: %w: its externalID %q is not indexed to it",
					connector, s, errLinkFormat, cand.ExternalID)
			}
			l, seq, ok = cand, s, true
			continue
		}
		stale = append(stale, append([]byte(nil), k...))
	}
	return l, seq, ok, stale, nil
}

// put stores l, keeping the indexes in step.
func (lb linkBuckets) put(l Link) error {
	if l.ExternalID == "" || l.ContactID == "" {
		return fmt.Errorf("link %s/%q to contact %q: externalID and contactID are required",
			l.Connector, l.ExternalID, l.ContactID)
	}
	ext := []byte(l.ExternalID)
	seq, exists := lb.lookup(ext)
	other, otherSeq, held, stale, err := lb.byContact(l.Connector, l.ContactID)
	if err != nil {
		return err
	}
	if held && (!exists || otherSeq != seq) && other.ExternalID != l.ExternalID {
		return fmt.Errorf("link %s/%s: %w: contact %s is linked to %s",
			l.Connector, l.ExternalID, ErrContactLinked, l.ContactID, other.ExternalID)
	}
	for _, k := range stale {
		if err := lb.contacts.Delete(k); err != nil {
			return err
		}
	}
	if exists {
		old, ok, err := lb.get(l.Connector, l.ExternalID)
		if err != nil {
			return err
		}
		if ok && old.ContactID != l.ContactID {
			if err := lb.contacts.Delete(contactKey(old.ContactID, seq)); err != nil {
				return err
			}
		}
	} else {
		if seq, err = lb.links.NextSequence(); err != nil {
			return err
		}
		if err := lb.ids.Put(ext, binary.AppendUvarint(nil, seq)); err != nil {
			return err
		}
	}
	if err := lb.links.Put(u64(seq), storedValue(l)); err != nil {
		return err
	}
	return lb.contacts.Put(contactKey(l.ContactID, seq), nil)
}
