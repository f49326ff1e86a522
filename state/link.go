package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Link ties a record of a connector's system to a workspace contact, with
// what syncd last agreed on with each side.
type Link struct {
	Connector, ExternalID, ContactID string
	// RecordID is the record's ID in its own system (connector.Record.ID),
	// for write-back.
	RecordID string
	// Fields are the canonical mapped values last agreed on both sides.
	Fields map[string]string
	// ItemIDs maps a field ("emails.work") to the workspace item id.
	ItemIDs map[string]string
	// WorkspaceHash is the hash of the values syncd last wrote to the
	// workspace (or read from it); SourceHash the same for the other system.
	WorkspaceHash string
	SourceHash    string
	// WorkspaceWrittenAt and SourceWrittenAt are when syncd last wrote to
	// each side.
	WorkspaceWrittenAt, SourceWrittenAt time.Time
	// ContactUpdatedAt is the contact's updatedAt as last seen or applied,
	// for ordering webhook events.
	ContactUpdatedAt time.Time
	// SourceUpdatedAt is the record's UpdatedAt as last seen.
	SourceUpdatedAt time.Time
	// LastSeenRun is the id of the last full pass that saw the record, for
	// detecting deletions in sources that are not incremental.
	LastSeenRun uint64
	// Fingerprint is the reconciler's digest of the raw record, sealed
	// with the mapping's configuration and WorkspaceHash: while a record's
	// fingerprint equals it, the record maps to WorkspaceHash and need not
	// be mapped again. Zero when unknown.
	Fingerprint [8]byte
}

// LinkDigest is the part of a link that the forward pass reads for every
// record to skip an unchanged one.
type LinkDigest struct {
	Found         bool
	RecordID      string
	WorkspaceHash string
	Fingerprint   [8]byte
}

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
	_, value, ok := lb.stored(seq)
	if !ok {
		return Link{}, false, fmt.Errorf("decode link %s/%s: %w: index names a missing link", connector, externalID, errLinkFormat)
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

// Link returns the link of (connector, externalID); ok false when none.
func (s *Store) Link(connector, externalID string) (l Link, ok bool, err error) {
	err = s.view(fmt.Sprintf("read link %s/%s", connector, externalID), func(tx *bolt.Tx) error {
		lb, found := readLinks(tx, connector)
		if !found {
			return nil
		}
		l, ok, err = lb.get(connector, externalID)
		return err
	})
	return l, ok, err
}

// LinkDigests returns the digests of the connector's links of
// externalIDs, in their order, in one read transaction (Found false where
// there is no link).
func (s *Store) LinkDigests(connector string, externalIDs []string) ([]LinkDigest, error) {
	out := make([]LinkDigest, len(externalIDs))
	err := s.view(fmt.Sprintf("read %d link digests of %s", len(externalIDs), connector), func(tx *bolt.Tx) error {
		lb, found := readLinks(tx, connector)
		if !found {
			return nil
		}
		for i, id := range externalIDs {
			seq, ok := lb.lookup([]byte(id))
			if !ok {
				continue
			}
			_, raw, ok := lb.stored(seq)
			if !ok {
				return fmt.Errorf("decode link %s/%s: %w: index names a missing link", connector, id, errLinkFormat)
			}
			d, err := decodeDigest(raw)
			if err != nil {
				return fmt.Errorf("decode link %s/%s: %w", connector, id, err)
			}
			out[i] = d
		}
		return nil
	})
	return out, err
}

// LinkByContact returns the connector's link to contactID; ok false when
// the contact is not linked.
func (s *Store) LinkByContact(connector, contactID string) (l Link, ok bool, err error) {
	err = s.view(fmt.Sprintf("read link %s of contact %s", connector, contactID), func(tx *bolt.Tx) error {
		lb, found := readLinks(tx, connector)
		if !found {
			return nil
		}
		l, _, ok, _, err = lb.byContact(connector, contactID)
		if ok && l.ContactID != contactID {
			l, ok = Link{}, false // stale reverse entry
		}
		return err
	})
	return l, ok, err
}

// PutLink stores l, replacing the link of (l.Connector, l.ExternalID) and
// moving the reverse index when ContactID changed. A contact is linked to
// at most one record per connector: linking one that another record holds
// fails with ErrContactLinked (delete the other link first).
func (s *Store) PutLink(l Link) error {
	return s.PutLinks([]Link{l})
}

// PutLinks stores many links in one transaction: all or none.
func (s *Store) PutLinks(ls []Link) error {
	if len(ls) == 0 {
		return nil
	}
	what := fmt.Sprintf("put %d links", len(ls))
	if len(ls) == 1 {
		what = fmt.Sprintf("put link %s/%s", ls[0].Connector, ls[0].ExternalID)
	}
	return s.update(what, func(tx *bolt.Tx) error {
		cache := map[string]linkBuckets{}
		for _, l := range ls {
			lb, ok := cache[l.Connector]
			if !ok {
				var err error
				if lb, err = writeLinks(tx, l.Connector); err != nil {
					return err
				}
				cache[l.Connector] = lb
			}
			if err := lb.put(l); err != nil {
				return err
			}
		}
		return nil
	})
}

// MoveLink replaces the link of (l.Connector, from) with l, in one
// transaction: a contact that follows another record of its connector
// (the survivor of a merge) keeps its one link.
func (s *Store) MoveLink(from string, l Link) error {
	return s.update(fmt.Sprintf("move link %s/%s to %s", l.Connector, from, l.ExternalID), func(tx *bolt.Tx) error {
		if _, _, err := deleteLink(tx, l.Connector, from); err != nil {
			return err
		}
		lb, err := writeLinks(tx, l.Connector)
		if err != nil {
			return err
		}
		return lb.put(l)
	})
}

// DeleteLink removes the link of (connector, externalID) and its reverse
// entry. Deleting a missing link is not an error.
func (s *Store) DeleteLink(connector, externalID string) error {
	return s.update(fmt.Sprintf("delete link %s/%s", connector, externalID), func(tx *bolt.Tx) error {
		_, _, err := deleteLink(tx, connector, externalID)
		return err
	})
}

// deleteLink removes a link and its reverse entry inside tx, and returns
// the link it removed (ok false when there was none).
func deleteLink(tx *bolt.Tx, connector, externalID string) (l Link, ok bool, err error) {
	lb, found := readLinks(tx, connector)
	if !found {
		return Link{}, false, nil
	}
	ext := []byte(externalID)
	seq, found := lb.lookup(ext)
	if !found {
		return Link{}, false, nil
	}
	if l, ok, err = lb.get(connector, externalID); err != nil || !ok {
		return l, ok, err
	}
	if err := lb.contacts.Delete(contactKey(l.ContactID, seq)); err != nil {
		return l, ok, err
	}
	if err := lb.links.Delete(u64(seq)); err != nil {
		return l, ok, err
	}
	return l, ok, lb.ids.Delete(ext)
}

// linkChunk is how many links ForEachLink reads per transaction.
const linkChunk = 500

// errStop ends a chunked scan early.
var errStop = errors.New("stop")

// ForEachLink calls fn with each link of the connector in externalID
// order. It reads in chunks of a few hundred links, each in its own read
// transaction, and calls fn outside any transaction: memory stays bounded
// and fn may write to the store (delete the link it is given, for
// instance). Links put or deleted during the scan may or may not be seen;
// none is seen twice. An error from fn stops the scan and is returned.
func (s *Store) ForEachLink(connector string, fn func(Link) error) error {
	return s.ForEachLinkWhere(connector, func([]byte) bool { return true }, fn)
}

// ForEachLinkWhere is ForEachLink for the links whose externalID want
// accepts: want sees every key (valid during the call only) inside the
// read transaction, and only the links it accepts are decoded. A scan for
// the few links a pass did not see costs a walk over the keys.
func (s *Store) ForEachLinkWhere(connector string, want func(externalID []byte) bool, fn func(Link) error) error {
	var after []byte
	for {
		var batch []Link
		scanned := 0
		err := s.view("scan links "+connector, func(tx *bolt.Tx) error {
			lb, found := readLinks(tx, connector)
			if !found {
				return nil
			}
			c := lb.ids.Cursor()
			k, _ := seekAfter(c, after)
			for ; k != nil && scanned < linkScanChunk && len(batch) < linkChunk; k, _ = c.Next() {
				scanned++
				after = append(after[:0], k...)
				if !want(k) {
					continue
				}
				l, ok, err := lb.get(connector, string(k))
				if err != nil {
					return err
				}
				if ok {
					batch = append(batch, l)
				}
			}
			if k == nil {
				after = nil
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, l := range batch {
			if err := fn(l); err != nil {
				return err
			}
		}
		if after == nil {
			return nil
		}
	}
}

// linkScanChunk is how many keys ForEachLinkWhere walks per transaction.
const linkScanChunk = 50_000

// seekAfter positions c on the first key after after (the first key when
// after is nil).
func seekAfter(c *bolt.Cursor, after []byte) ([]byte, []byte) {
	if after == nil {
		return c.First()
	}
	k, v := c.Seek(after)
	if k != nil && bytes.Equal(k, after) {
		return c.Next()
	}
	return k, v
}

// CountLinks returns the number of the connector's links.
func (s *Store) CountLinks(connector string) (int, error) {
	var n int
	err := s.view("count links "+connector, func(tx *bolt.Tx) error {
		if lb, found := readLinks(tx, connector); found {
			n = lb.ids.Stats().KeyN
		}
		return nil
	})
	return n, err
}

// MarkSeen sets LastSeenRun to runID on the connector's links of
// externalIDs, in one transaction (call it per batch). IDs without a link
// are skipped: the link written after their create carries the run.
func (s *Store) MarkSeen(connector string, runID uint64, externalIDs []string) error {
	if len(externalIDs) == 0 {
		return nil
	}
	return s.update(fmt.Sprintf("mark %d links of %s seen", len(externalIDs), connector), func(tx *bolt.Tx) error {
		lb, found := readLinks(tx, connector)
		if !found {
			return nil
		}
		for _, id := range externalIDs {
			if id == "" {
				continue
			}
			l, ok, err := lb.get(connector, id)
			if err != nil {
				return err
			}
			if !ok || l.LastSeenRun == runID {
				continue
			}
			l.LastSeenRun = runID
			if err := lb.put(l); err != nil {
				return err
			}
		}
		return nil
	})
}
