package state

import (
	"bytes"
	"errors"
	"fmt"
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
	Fingerprint [16]byte
}

// LinkDigest is the part of a link that the forward pass reads for every
// record to skip an unchanged one.
type LinkDigest struct {
	Found         bool
	RecordID      string
	WorkspaceHash string
	Fingerprint   [16]byte
}

// A link is stored in the connector's ext bucket in the binary form of
// linkcodec.go; its LastSeenRun in the seen bucket, so that MarkSeen
// rewrites 8 bytes and not the whole link.
var (
	subExt     = []byte("ext")     // externalID -> encodeLink value
	subContact = []byte("contact") // contactID -> externalID
	subSeen    = []byte("seen")    // externalID -> run id (8 bytes)
)

// linkBuckets are one connector's link buckets.
type linkBuckets struct{ ext, contact, seen *bolt.Bucket }

// readLinks returns the connector's buckets, ok false when it has none.
func readLinks(tx *bolt.Tx, connector string) (linkBuckets, bool) {
	c := tx.Bucket(bucketLinks).Bucket([]byte(connector))
	if c == nil {
		return linkBuckets{}, false
	}
	return linkBuckets{c.Bucket(subExt), c.Bucket(subContact), c.Bucket(subSeen)}, true
}

// linkFill is the fill percent of the link buckets: links are small and
// rarely grow in place, so pages are split nearly full rather than half
// full (bbolt's default), which keeps the file near its data's size.
const linkFill = 0.9

// writeLinks returns the connector's buckets, creating them.
func writeLinks(tx *bolt.Tx, connector string) (linkBuckets, error) {
	if err := checkName("connector", connector); err != nil {
		return linkBuckets{}, err
	}
	c, err := tx.Bucket(bucketLinks).CreateBucketIfNotExists([]byte(connector))
	if err != nil {
		return linkBuckets{}, err
	}
	var lb linkBuckets
	for _, sub := range []struct {
		name []byte
		b    **bolt.Bucket
	}{{subExt, &lb.ext}, {subContact, &lb.contact}, {subSeen, &lb.seen}} {
		if *sub.b, err = c.CreateBucketIfNotExists(sub.name); err != nil {
			return linkBuckets{}, err
		}
		(*sub.b).FillPercent = linkFill
	}
	return lb, nil
}

// get decodes the link of externalID; ok false when there is none.
func (lb linkBuckets) get(connector, externalID string) (Link, bool, error) {
	raw := lb.ext.Get([]byte(externalID))
	if raw == nil {
		return Link{}, false, nil
	}
	l, err := decodeLink(connector, externalID, raw, lb.seen.Get([]byte(externalID)))
	return l, err == nil, err
}

func decodeLink(connector, externalID string, raw, seen []byte) (Link, error) {
	l := Link{Connector: connector, ExternalID: externalID, LastSeenRun: getU64(seen)}
	if err := decodeLinkValue(raw, &l); err != nil {
		return Link{}, fmt.Errorf("decode link %s/%s: %w", connector, externalID, err)
	}
	return l, nil
}

// put stores l, keeping the reverse index in step.
func (lb linkBuckets) put(l Link) error {
	if l.ExternalID == "" || l.ContactID == "" {
		return fmt.Errorf("link %s/%q to contact %q: externalID and contactID are required",
			l.Connector, l.ExternalID, l.ContactID)
	}
	ext, contact := []byte(l.ExternalID), []byte(l.ContactID)
	if owner := lb.contact.Get(contact); owner != nil && !bytes.Equal(owner, ext) {
		// Refuse only when the other link really holds the contact; a
		// reverse entry left without its link is stale and replaced.
		other, ok, err := lb.get(l.Connector, string(owner))
		if err != nil {
			return err
		}
		if ok && other.ContactID == l.ContactID {
			return fmt.Errorf("link %s/%s: %w: contact %s is linked to %s",
				l.Connector, l.ExternalID, ErrContactLinked, l.ContactID, owner)
		}
	}
	old, ok, err := lb.get(l.Connector, l.ExternalID)
	if err != nil {
		return err
	}
	if ok && old.ContactID != l.ContactID && bytes.Equal(lb.contact.Get([]byte(old.ContactID)), ext) {
		if err := lb.contact.Delete([]byte(old.ContactID)); err != nil {
			return err
		}
	}
	if err := lb.ext.Put(ext, encodeLink(l)); err != nil {
		return err
	}
	if err := lb.contact.Put(contact, ext); err != nil {
		return err
	}
	if l.LastSeenRun == 0 {
		return lb.seen.Delete(ext)
	}
	return lb.seen.Put(ext, u64(l.LastSeenRun))
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
			raw := lb.ext.Get([]byte(id))
			if raw == nil {
				continue
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
		ext := lb.contact.Get([]byte(contactID))
		if ext == nil {
			return nil
		}
		l, ok, err = lb.get(connector, string(ext))
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
	if l, ok, err = lb.get(connector, externalID); err != nil || !ok {
		return l, ok, err
	}
	ext := []byte(externalID)
	if bytes.Equal(lb.contact.Get([]byte(l.ContactID)), ext) {
		if err := lb.contact.Delete([]byte(l.ContactID)); err != nil {
			return l, ok, err
		}
	}
	if err := lb.seen.Delete(ext); err != nil {
		return l, ok, err
	}
	return l, ok, lb.ext.Delete(ext)
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
	var after []byte
	for {
		batch := make([]Link, 0, linkChunk)
		err := s.view("scan links "+connector, func(tx *bolt.Tx) error {
			lb, found := readLinks(tx, connector)
			if !found {
				return nil
			}
			c := lb.ext.Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && len(batch) < linkChunk; k, v = c.Next() {
				l, err := decodeLink(connector, string(k), v, lb.seen.Get(k))
				if err != nil {
					return err
				}
				batch = append(batch, l)
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
		if len(batch) < linkChunk {
			return nil
		}
		after = []byte(batch[len(batch)-1].ExternalID)
	}
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
			c := lb.ext.Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && scanned < linkScanChunk && len(batch) < linkChunk; k, v = c.Next() {
				scanned++
				after = append(after[:0], k...)
				if !want(k) {
					continue
				}
				l, err := decodeLink(connector, string(k), v, lb.seen.Get(k))
				if err != nil {
					return err
				}
				batch = append(batch, l)
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
			n = lb.ext.Stats().KeyN
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
		run := u64(runID)
		for _, id := range externalIDs {
			k := []byte(id)
			if id == "" || lb.ext.Get(k) == nil {
				continue
			}
			if err := lb.seen.Put(k, run); err != nil {
				return err
			}
		}
		return nil
	})
}
