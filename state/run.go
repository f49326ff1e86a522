package state

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Run is one pass of a connector, as recorded in the run history. A run
// whose FinishedAt is zero is still going, or its process died.
type Run struct {
	ID         uint64    `json:"-"`
	Connector  string    `json:"connector"`
	Kind       string    `json:"kind"` // run | resync
	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	Created    int       `json:"created,omitempty"`
	Updated    int       `json:"updated,omitempty"`
	Unchanged  int       `json:"unchanged,omitempty"`
	Deleted    int       `json:"deleted,omitempty"`
	Failed     int       `json:"failed,omitempty"`
	Adopted    int       `json:"adopted,omitempty"`
	Held       int       `json:"held,omitempty"`
	APICalls   int64     `json:"apiCalls,omitempty"`
	Err        string    `json:"err,omitempty"`
	// Stopped says why a pass that ended early was not a failure:
	// StoppedBudget when the connector's API budget was spent.
	Stopped string `json:"stopped,omitempty"`
}

// StoppedBudget is Run.Stopped of a pass that ended at the connector's
// API budget (connector.ErrBudgetSpent): the next pass resumes it.
const StoppedBudget = "budget"

// Start records the start of a run and returns it with its ID (unique
// across connectors and increasing: usable as Link.LastSeenRun) and
// StartedAt set.
func (s *Runs) Start(connector, kind string) (Run, error) {
	if err := checkName("connector", connector); err != nil {
		return Run{}, fmt.Errorf("start run: %w", err)
	}
	r := Run{Connector: connector, Kind: kind, StartedAt: s.now()}
	err := s.update("start run "+connector, func(tx *bolt.Tx) error {
		id, err := runJournal.next(tx)
		if err != nil {
			return err
		}
		r.ID = id
		return runJournal.put(tx, connector, id, r)
	})
	if err != nil {
		return Run{}, err
	}
	return r, nil
}

// Finish records the outcome of a run started with Start;
// FinishedAt defaults to now. ErrNotFound when the run is unknown.
func (s *Runs) Finish(r Run) error {
	if r.FinishedAt.IsZero() {
		r.FinishedAt = s.now()
	}
	return s.update(fmt.Sprintf("finish run %d", r.ID), func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketRuns).Get(u64(r.ID))
		if raw == nil {
			return ErrNotFound
		}
		var old Run
		if err := unmarshal(raw, &old); err != nil {
			return err
		}
		if old.Connector != r.Connector {
			return fmt.Errorf("run %d belongs to connector %s, not %s", r.ID, old.Connector, r.Connector)
		}
		return runJournal.put(tx, r.Connector, r.ID, r)
	})
}

// List returns up to limit runs of the connector ("" for all), newest
// first (limit <= 0: all).
func (s *Runs) List(connector string, limit int) ([]Run, error) {
	var out []Run
	err := s.view("list runs "+connector, func(tx *bolt.Tx) error {
		return runJournal.newest(tx, connector, limit, func(id uint64, raw []byte) error {
			var r Run
			if err := unmarshal(raw, &r); err != nil {
				return fmt.Errorf("decode run %d: %w", id, err)
			}
			r.ID = id
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// Last returns the connector's newest run, finished or not; ok false
// when it never ran.
func (s *Runs) Last(connector string) (Run, bool, error) {
	runs, err := s.List(connector, 1)
	if err != nil || len(runs) == 0 {
		return Run{}, false, err
	}
	return runs[0], true, nil
}

// Prune keeps the newest keep runs of each connector and returns how
// many it removed.
func (s *Runs) Prune(keep int) (int, error) {
	var n int
	err := s.update("prune runs", func(tx *bolt.Tx) error {
		var err error
		n, err = runJournal.prune(tx, keep)
		return err
	})
	return n, err
}
