package state

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Conflict records that both sides changed a linked contact's fields
// since the last sync, and how the policy settled it.
type Conflict struct {
	ID         uint64 `json:"-"`
	Connector  string `json:"connector"`
	ExternalID string `json:"externalId"`
	ContactID  string `json:"contactId"`
	// Policy is the connector's conflict policy; Winner the side that won
	// (workspace or the connector's side).
	Policy string `json:"policy"`
	Winner string `json:"winner"`
	// Workspace and Source are the two sides' differing values.
	Workspace map[string]string `json:"workspace,omitempty"`
	Source    map[string]string `json:"source,omitempty"`
	At        time.Time         `json:"at,omitzero"`
	// Kind is "" for two edits of a field, KindEditAfterDelete for an
	// edit on one side after a delete on the other (Policy then names the
	// editAfterDelete rule, Winner the side that stays or is deleted).
	Kind string `json:"kind,omitempty"`
}

// KindEditAfterDelete is Conflict.Kind of an edit after a delete.
const KindEditAfterDelete = "edit-after-delete"

// Add appends c to the conflict journal (At defaults to now) and
// returns its ID.
func (s *Conflicts) Add(c Conflict) (uint64, error) {
	if err := checkName("connector", c.Connector); err != nil {
		return 0, fmt.Errorf("add conflict: %w", err)
	}
	var id uint64
	err := s.update(fmt.Sprintf("add conflict %s/%s", c.Connector, c.ExternalID), func(tx *bolt.Tx) error {
		var err error
		id, err = addConflict(tx, c, s.now())
		return err
	})
	return id, err
}

// addConflict appends c to the journal inside tx (At defaults to now),
// for Add and for the transactions of other domains (Reverse.Commit).
func addConflict(tx *bolt.Tx, c Conflict, now time.Time) (uint64, error) {
	if err := checkName("connector", c.Connector); err != nil {
		return 0, fmt.Errorf("add conflict: %w", err)
	}
	if c.At.IsZero() {
		c.At = now
	}
	id, err := conflictJournal.next(tx)
	if err != nil {
		return 0, err
	}
	c.ID = id
	return id, conflictJournal.put(tx, c.Connector, id, c)
}

// List returns up to limit conflicts of the connector ("" for all),
// newest first (limit <= 0: all).
func (s *Conflicts) List(connector string, limit int) ([]Conflict, error) {
	var out []Conflict
	err := s.view("list conflicts "+connector, func(tx *bolt.Tx) error {
		return conflictJournal.newest(tx, connector, limit, func(id uint64, raw []byte) error {
			var c Conflict
			if err := unmarshal(raw, &c); err != nil {
				return fmt.Errorf("decode conflict %d: %w", id, err)
			}
			c.ID = id
			out = append(out, c)
			return nil
		})
	})
	return out, err
}

// Count returns the number of conflicts of the connector (""
// for all).
func (s *Conflicts) Count(connector string) (int, error) {
	var n int
	err := s.view("count conflicts "+connector, func(tx *bolt.Tx) error {
		n = conflictJournal.count(tx, connector)
		return nil
	})
	return n, err
}

// Prune keeps the newest keep conflicts of each connector and
// returns how many it removed.
func (s *Conflicts) Prune(keep int) (int, error) {
	var n int
	err := s.update("prune conflicts", func(tx *bolt.Tx) error {
		var err error
		n, err = conflictJournal.prune(tx, keep)
		return err
	})
	return n, err
}
