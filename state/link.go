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
	// LastSeenRun is the id of the last pass that wrote the link, or that
	// marked it seen (MarkSeen). The reconciler tells the records a pass
	// saw in memory; this is what the state file keeps of it.
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

// Get returns the link of (connector, externalID); ok false when none.
func (s *Links) Get(connector, externalID string) (l Link, ok bool, err error) {
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

// Digests returns the digests of the connector's links of
// externalIDs, in their order, in one read transaction (Found false where
// there is no link).
func (s *Links) Digests(connector string, externalIDs []string) ([]LinkDigest, error) {
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

// ByContact returns the connector's link to contactID; ok false when
// the contact is not linked.
func (s *Links) ByContact(connector, contactID string) (l Link, ok bool, err error) {
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

// Put stores l, replacing the link of (l.Connector, l.ExternalID) and
// moving the reverse index when ContactID changed. A contact is linked to
// at most one record per connector: linking one that another record holds
// fails with ErrContactLinked (delete the other link first).
func (s *Links) Put(l Link) error {
	return s.PutAll([]Link{l})
}

// PutAll stores many links in one transaction: all or none.
func (s *Links) PutAll(ls []Link) error {
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

// Move replaces the link of (l.Connector, from) with l, in one
// transaction: a contact that follows another record of its connector
// (the survivor of a merge) keeps its one link.
func (s *Links) Move(from string, l Link) error {
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

// Delete removes the link of (connector, externalID) and its reverse
// entry. Deleting a missing link is not an error.
func (s *Links) Delete(connector, externalID string) error {
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

// linkChunk is how many links ForEach reads per transaction.
const linkChunk = 500

// errStop ends a chunked scan early.
var errStop = errors.New("stop")

// ForEach calls fn with each link of the connector in externalID
// order. It reads in chunks of a few hundred links, each in its own read
// transaction, and calls fn outside any transaction: memory stays bounded
// and fn may write to the store (delete the link it is given, for
// instance). Links put or deleted during the scan may or may not be seen;
// none is seen twice. An error from fn stops the scan and is returned.
func (s *Links) ForEach(connector string, fn func(Link) error) error {
	return s.ForEachWhere(connector, func([]byte) bool { return true }, fn)
}

// ForEachWhere is ForEach for the links whose externalID want
// accepts: want sees every key (valid during the call only) inside the
// read transaction, and only the links it accepts are decoded. A scan for
// the few links a pass did not see costs a walk over the keys.
func (s *Links) ForEachWhere(connector string, want func(externalID []byte) bool, fn func(Link) error) error {
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

// linkScanChunk is how many keys ForEachWhere walks per transaction.
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

// Count returns the number of the connector's links.
func (s *Links) Count(connector string) (int, error) {
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
func (s *Links) MarkSeen(connector string, runID uint64, externalIDs []string) error {
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
