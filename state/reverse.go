package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// What the reverse direction (workspace to the other system) keeps beside
// the links, per connector, in the bucket "reverse":
//
//   - a pending create ("p\x00" + contactID): written before a contact
//     made in the workspace's app is created in the other system, so that
//     a redelivery of its event after a crash finds it and never creates
//     the record twice;
//   - the values last agreed for targets that only flow to the other
//     system ("a\x00" + contactID): they are not part of Link.Fields,
//     which holds the forward-mapped values the reconciler compares;
//   - a record to revisit ("r\x00" + recordID): the write-back let the
//     record's value win a conflict, and the forward direction, which may
//     have read the record already, reads it again to bring the value to
//     the contact (see Revisit);
//   - the record's own edit times of fields ("t\x00" + contactID), as
//     either direction learnt them before the value was synced (a change
//     stream's versions, a read of the record made before a later edit of
//     another column moved its updated_at): a conflict is weighed with
//     the field's own time, whichever direction weighs it (see
//     RecordEdit).
//
// The bucket is created by the first write (files of schema version 1
// lack it; reads treat a missing bucket as empty), so no migration is
// needed.
var bucketReverse = []byte("reverse")

const (
	reversePending = "p\x00"
	reverseAgreed  = "a\x00"
	reverseRevisit = "r\x00"
	reverseEdits   = "t\x00"
	reverseAppEdit = "w\x00"
)

// RecordEdit is when a record came to hold a value of a target, as a
// change stream told: older than the row's updated_at when another column
// was edited since.
type RecordEdit struct {
	Target string    `json:"target"`
	Value  string    `json:"value"`
	At     time.Time `json:"at"`
	// Since is the link's SourceUpdatedAt when the time was learnt: it
	// holds while the link agrees on the same version of the record (a
	// value edited away and back since then is a new edit). Zero for a
	// time learnt while the record was being made for the contact
	// (PendingCreate), before any link: the link that clears the pending
	// create binds it to its own SourceUpdatedAt (bindPendingEdits).
	Since time.Time `json:"since,omitzero"`
	// Bound marks a time a read of the whole record gave (its updated_at
	// while it held the value): the value was edited then or earlier,
	// not necessarily then.
	Bound bool `json:"bound,omitempty"`
}

// Holds reports whether e tells the edit time of value v of a record
// whose link's SourceUpdatedAt is since.
func (e RecordEdit) Holds(v string, since time.Time) bool {
	return e.Value == v && e.Since.Equal(since)
}

// String is e for logs: target=value@time since the link's version.
func (e RecordEdit) String() string {
	return fmt.Sprintf("%s=%s@%s since %s", e.Target, e.Value, e.At.UTC().Format("15:04:05.000000"), e.Since.UTC().Format("15:04:05.000000"))
}

// HeldBy reports whether e tells already that value v, under a link
// whose version is since, was held at at or earlier: a later sighting of
// v adds nothing (the earlier time is the one kept).
func (e RecordEdit) HeldBy(v string, since, at time.Time) bool {
	return e.Holds(v, since) && !e.At.After(at)
}

// PutRecordEdits records the record edit times es of the contact's
// record, replacing those of the same targets.
func (s *Reverse) PutRecordEdits(connector, contactID string, es []RecordEdit) error {
	return s.putEdits(reverseEdits, "record", connector, contactID, es)
}

// PutRecordEditsOf records the record edit times of several contacts'
// records (by contact id) in one transaction.
func (s *Reverse) PutRecordEditsOf(connector string, byContact map[string][]RecordEdit) error {
	if len(byContact) == 0 {
		return nil
	}
	return s.update(fmt.Sprintf("put record edit times of %d contacts of %s", len(byContact), connector), func(tx *bolt.Tx) error {
		for id, es := range byContact {
			if err := putEditsTx(tx, reverseEdits, connector, id, es); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordEdits returns the record edit times of the contact's record by
// target (nil when none).
func (s *Reverse) RecordEdits(connector, contactID string) (map[string]RecordEdit, error) {
	return s.edits(reverseEdits, "record", connector, contactID)
}

// PutAppEdits records when the app made the contact's values es, as
// learnt from versions of it acknowledged as stale (older than syncd's
// own patch of other fields): the version that holds the value next is
// later than the app's edit (Since is the link's ContactUpdatedAt).
func (s *Reverse) PutAppEdits(connector, contactID string, es []RecordEdit) error {
	return s.putEdits(reverseAppEdit, "app", connector, contactID, es)
}

// AppEdits returns the app edit times PutAppEdits kept, by target.
func (s *Reverse) AppEdits(connector, contactID string) (map[string]RecordEdit, error) {
	return s.edits(reverseAppEdit, "app", connector, contactID)
}

func (s *Reverse) putEdits(prefix, side, connector, contactID string, es []RecordEdit) error {
	if len(es) == 0 {
		return nil
	}
	return s.update(fmt.Sprintf("put %s edit times %s/%s", side, connector, contactID), func(tx *bolt.Tx) error {
		return putEditsTx(tx, prefix, connector, contactID, es)
	})
}

func putEditsTx(tx *bolt.Tx, prefix, connector, contactID string, es []RecordEdit) error {
	b, err := reverseWrite(tx, connector)
	if err != nil {
		return err
	}
	k := []byte(prefix + contactID)
	cur := map[string]RecordEdit{}
	if raw := b.Get(k); raw != nil {
		_ = unmarshal(raw, &cur) // a damaged entry is replaced
	}
	for _, e := range es {
		cur[e.Target] = e
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

func (s *Reverse) edits(prefix, side, connector, contactID string) (map[string]RecordEdit, error) {
	var out map[string]RecordEdit
	err := s.view(fmt.Sprintf("read %s edit times %s/%s", side, connector, contactID), func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		if raw := b.Get([]byte(prefix + contactID)); raw != nil {
			return unmarshal(raw, &out)
		}
		return nil
	})
	return out, err
}

// Revisit asks the forward direction to read a record again: the
// write-back settled a conflict for the record's value, which the
// forward direction brings to the contact, and it may have read that
// version of the record already (before the app's edit reached the
// write-back), so that its changes feed would not show it again.
type Revisit struct {
	Connector string    `json:"connector"`
	RecordID  string    `json:"recordId"`
	At        time.Time `json:"at"` // when it was asked (set by Commit)
}

// PendingCreate marks a record being created in a connector's system for
// a contact made in the workspace.
type PendingCreate struct {
	Connector string `json:"connector"`
	ContactID string `json:"contactId"`
	// RecordID is set once the create answered: the record exists, and
	// only the contact's externalId and the link remain to be written.
	RecordID string `json:"recordId,omitempty"`
	// Staged is set when RecordID was told before the create's commit
	// (connector.StageFunc): the record exists only if the commit went
	// through.
	Staged bool `json:"staged,omitempty"`
	// Remade is set when the record is made again from an app edit of a
	// contact syncd deleted (ContactDeletion): the contact is gone, so
	// the record is left unlinked, for the forward direction to make
	// its contact.
	Remade bool `json:"remade,omitempty"`
	// Fields are the record fields sent with the create (for an operator
	// who must check a create whose outcome is unknown).
	Fields map[string]string `json:"fields,omitempty"`
	// ContactUpdatedAt is the updatedAt of the contact version the
	// record is created from.
	ContactUpdatedAt time.Time `json:"contactUpdatedAt,omitzero"`
	CreatedAt        time.Time `json:"createdAt,omitzero"`
	UpdatedAt        time.Time `json:"updatedAt,omitzero"`
}

// reverseRead returns the connector's reverse bucket, nil when none.
func reverseRead(tx *bolt.Tx, connector string) *bolt.Bucket {
	root := tx.Bucket(bucketReverse)
	if root == nil {
		return nil
	}
	return root.Bucket([]byte(connector))
}

// reverseWrite returns the connector's reverse bucket, creating it.
func reverseWrite(tx *bolt.Tx, connector string) (*bolt.Bucket, error) {
	if err := checkName("connector", connector); err != nil {
		return nil, err
	}
	root, err := tx.CreateBucketIfNotExists(bucketReverse)
	if err != nil {
		return nil, err
	}
	return root.CreateBucketIfNotExists([]byte(connector))
}

// PutPending records (or replaces) the pending create of
// (p.Connector, p.ContactID). CreatedAt defaults to now, UpdatedAt is now.
func (s *Reverse) PutPending(p PendingCreate) error {
	if p.ContactID == "" {
		return fmt.Errorf("put pending create %s: empty contact id", p.Connector)
	}
	now := s.now()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now
	}
	p.UpdatedAt = now
	raw, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("put pending create %s/%s: %w", p.Connector, p.ContactID, err)
	}
	return s.update(fmt.Sprintf("put pending create %s/%s", p.Connector, p.ContactID), func(tx *bolt.Tx) error {
		b, err := reverseWrite(tx, p.Connector)
		if err != nil {
			return err
		}
		return b.Put([]byte(reversePending+p.ContactID), raw)
	})
}

// PendingOf returns the pending create of (connector, contactID);
// ok false when there is none.
func (s *Reverse) PendingOf(connector, contactID string) (p PendingCreate, ok bool, err error) {
	err = s.view(fmt.Sprintf("read pending create %s/%s", connector, contactID), func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(reversePending + contactID))
		if raw == nil {
			return nil
		}
		ok = true
		return unmarshal(raw, &p)
	})
	return p, ok, err
}

// Pending returns every pending create of the connector ("" for
// all connectors), for operators.
func (s *Reverse) Pending(connector string) ([]PendingCreate, error) {
	var out []PendingCreate
	err := s.view("read pending creates", func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketReverse)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(name []byte) error {
			if connector != "" && string(name) != connector {
				return nil
			}
			c := root.Bucket(name).Cursor()
			prefix := []byte(reversePending)
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				var p PendingCreate
				if err := unmarshal(v, &p); err != nil {
					return fmt.Errorf("decode pending create %s: %w", k[len(prefix):], err)
				}
				out = append(out, p)
			}
			return nil
		})
	})
	return out, err
}

// DeletePending removes the pending create of (connector,
// contactID); removing a missing one is not an error.
func (s *Reverse) DeletePending(connector, contactID string) error {
	return s.update(fmt.Sprintf("delete pending create %s/%s", connector, contactID), func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		return b.Delete([]byte(reversePending + contactID))
	})
}

// Agreed returns the values last agreed with the connector's
// system for the contact's targets that flow only to it (nil when none).
func (s *Reverse) Agreed(connector, contactID string) (map[string]string, error) {
	var out map[string]string
	err := s.view(fmt.Sprintf("read reverse values %s/%s", connector, contactID), func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(reverseAgreed + contactID))
		if raw == nil {
			return nil
		}
		return unmarshal(raw, &out)
	})
	return out, err
}

// ReverseLink is one outcome of the reverse direction to record: the link
// and the reverse-only values agreed for its contact, and whether the
// contact's pending create is done.
type ReverseLink struct {
	Link Link
	// Agreed are the values of targets flowing only to the other system;
	// nil leaves what is stored, an empty map removes it.
	Agreed map[string]string
	// ClearPending removes the contact's pending create.
	ClearPending bool
	// Edits are record edit times learnt as the link is made (the
	// record as read then holding values other than those agreed), kept
	// unless an earlier time of the same value is known.
	Edits []RecordEdit
}

// PutLinks stores the links, their reverse-only values, and clears
// the pending creates, all in one transaction: a crash leaves all of them
// or none.
func (s *Reverse) PutLinks(rls []ReverseLink) error {
	return s.Commit(ReverseCommit{Links: rls})
}

// ReverseCommit is what one round of the reverse direction records once
// its writes into the other system are done.
type ReverseCommit struct {
	// Links to store (see ReverseLink).
	Links []ReverseLink
	// Unlink are links to remove, with their contacts' reverse-only
	// values: Connector and ExternalID name each.
	Unlink []Link
	// Conflicts are appended to the conflict journal (At defaults to now).
	Conflicts []Conflict
	// DropPending are pending creates now settled without a link (their
	// contact deleted before its record was linked): Connector and
	// ContactID name each.
	DropPending []PendingCreate
	// Revisit are records the forward direction is to read again.
	Revisit []Revisit
	// DropDeletions are contact deletions now settled (see
	// ContactDeletion): Connector and ContactID name each.
	DropDeletions []ContactDeletion
	// Ack are the inbox events now applied.
	Ack []uint64
}

// Commit records c in one transaction: the links and the journal
// entries appear and the events leave the inbox together, so that an
// event is acknowledged exactly when what it caused is recorded.
func (s *Reverse) Commit(c ReverseCommit) error {
	if len(c.Links) == 0 && len(c.Unlink) == 0 && len(c.Conflicts) == 0 && len(c.DropPending) == 0 && len(c.Revisit) == 0 && len(c.DropDeletions) == 0 && len(c.Ack) == 0 {
		return nil
	}
	now := s.now()
	what := fmt.Sprintf("commit reverse: %d links, %d unlinks, %d conflicts, %d pending creates dropped, %d events",
		len(c.Links), len(c.Unlink), len(c.Conflicts), len(c.DropPending), len(c.Ack))
	err := s.update(what, func(tx *bolt.Tx) error {
		for _, rl := range c.Links {
			if err := putReverseLink(tx, rl); err != nil {
				return err
			}
		}
		for _, l := range c.Unlink {
			if err := deleteReverseLink(tx, l.Connector, l.ExternalID); err != nil {
				return err
			}
		}
		for _, cf := range c.Conflicts {
			if _, err := addConflict(tx, cf, now); err != nil {
				return err
			}
		}
		for _, rv := range c.Revisit {
			b, err := reverseWrite(tx, rv.Connector)
			if err != nil {
				return err
			}
			rv.At = now
			raw, err := json.Marshal(rv)
			if err != nil {
				return err
			}
			if err := b.Put([]byte(reverseRevisit+rv.RecordID), raw); err != nil {
				return err
			}
		}
		for _, p := range c.DropPending {
			if b := reverseRead(tx, p.Connector); b != nil {
				if err := b.Delete([]byte(reversePending + p.ContactID)); err != nil {
					return err
				}
				if err := b.Delete([]byte(reverseEdits + p.ContactID)); err != nil {
					return err // times kept of the record being made
				}
			}
		}
		for _, d := range c.DropDeletions {
			if err := dropDeletion(tx, d.Connector, d.ContactID); err != nil {
				return err
			}
		}
		inbox := tx.Bucket(bucketInbox)
		for _, seq := range c.Ack {
			if err := inbox.Delete(u64(seq)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.inbox.removed(c.Ack...)
	}
	return err
}

// putReverseLink stores one ReverseLink inside tx.
func putReverseLink(tx *bolt.Tx, rl ReverseLink) error {
	l := rl.Link
	lb, err := writeLinks(tx, l.Connector)
	if err != nil {
		return err
	}
	if err := lb.put(l); err != nil {
		return err
	}
	if rl.Agreed == nil && !rl.ClearPending && len(rl.Edits) == 0 {
		return nil
	}
	b, err := reverseWrite(tx, l.Connector)
	if err != nil {
		return err
	}
	if rl.ClearPending {
		if err := b.Delete([]byte(reversePending + l.ContactID)); err != nil {
			return err
		}
		if err := bindPendingEdits(b, l); err != nil {
			return err
		}
	}
	if err := putEarlierEdits(b, l.ContactID, rl.Edits); err != nil {
		return err
	}
	if rl.Agreed == nil {
		return nil
	}
	k := []byte(reverseAgreed + l.ContactID)
	if len(rl.Agreed) == 0 {
		return b.Delete(k)
	}
	raw, err := json.Marshal(rl.Agreed)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}

// DeleteLink removes the link of (connector, externalID), its
// reverse index entry and the reverse-only values of its contact, in one
// transaction. Removing a missing link is not an error.
func (s *Reverse) DeleteLink(connector, externalID string) error {
	return s.update(fmt.Sprintf("delete reverse link %s/%s", connector, externalID), func(tx *bolt.Tx) error {
		return deleteReverseLink(tx, connector, externalID)
	})
}

func deleteReverseLink(tx *bolt.Tx, connector, externalID string) error {
	l, ok, err := deleteLink(tx, connector, externalID)
	if err != nil || !ok {
		return err
	}
	if b := reverseRead(tx, connector); b != nil {
		for _, p := range []string{reverseEdits, reverseAppEdit} {
			if err := b.Delete([]byte(p + l.ContactID)); err != nil {
				return err
			}
		}
		return b.Delete([]byte(reverseAgreed + l.ContactID))
	}
	return nil
}

// Revisits returns the records the write-back asked the forward
// direction of connector to read again.
func (s *Reverse) Revisits(connector string) ([]Revisit, error) {
	var out []Revisit
	err := s.view("read revisits "+connector, func(tx *bolt.Tx) error {
		b := reverseRead(tx, connector)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		prefix := []byte(reverseRevisit)
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rv Revisit
			if err := unmarshal(v, &rv); err != nil {
				return fmt.Errorf("decode revisit %s: %w", k[len(prefix):], err)
			}
			out = append(out, rv)
		}
		return nil
	})
	return out, err
}

// DoneRevisits forgets the revisits rs once read again; one asked again
// since (a later At) stays.
func (s *Reverse) DoneRevisits(rs []Revisit) error {
	if len(rs) == 0 {
		return nil
	}
	return s.update(fmt.Sprintf("forget %d revisits", len(rs)), func(tx *bolt.Tx) error {
		for _, rv := range rs {
			b := reverseRead(tx, rv.Connector)
			if b == nil {
				continue
			}
			k := []byte(reverseRevisit + rv.RecordID)
			var cur Revisit
			if raw := b.Get(k); raw == nil || unmarshal(raw, &cur) != nil || cur.At.After(rv.At) {
				continue
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// bindPendingEdits binds the record edit times kept of l's contact while
// its record was being made (Since zero: no link yet) to the link now
// stored for it. A value the record no longer holds is never weighed
// (RecordEdit.Holds compares it with the record's), so none is dropped.
func bindPendingEdits(b *bolt.Bucket, l Link) error {
	k := []byte(reverseEdits + l.ContactID)
	raw := b.Get(k)
	if raw == nil {
		return nil
	}
	var cur map[string]RecordEdit
	if unmarshal(raw, &cur) != nil {
		return b.Delete(k) // a damaged entry tells nothing
	}
	bound := false
	for t, e := range cur {
		if e.Since.IsZero() {
			e.Since = l.SourceUpdatedAt
			cur[t], bound = e, true
		}
	}
	if !bound {
		return nil
	}
	out, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	return b.Put(k, out)
}

// putEarlierEdits keeps the record edit times es of the contact, each
// unless the same value's time is known already, as early or earlier.
func putEarlierEdits(b *bolt.Bucket, contactID string, es []RecordEdit) error {
	if len(es) == 0 {
		return nil
	}
	k := []byte(reverseEdits + contactID)
	cur := map[string]RecordEdit{}
	if raw := b.Get(k); raw != nil {
		_ = unmarshal(raw, &cur) // a damaged entry is replaced
	}
	changed := false
	for _, e := range es {
		if old, ok := cur[e.Target]; ok && old.HeldBy(e.Value, e.Since, e.At) {
			continue
		}
		cur[e.Target], changed = e, true
	}
	if !changed {
		return nil
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	return b.Put(k, raw)
}
