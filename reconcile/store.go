package reconcile

import "github.com/syncd-io/syncd/state"

// Store is the part of syncd's state the reconciler uses, domain by
// domain; StoreOf takes it from an open state file. Each field asks for
// the few methods the reconciler calls on that domain.
type Store struct {
	Links         LinkStore
	Checkpoints   CheckpointStore
	DeadLetters   DeadLetterStore
	FieldWarnings FieldWarningStore
	Matches       MatchStore
	Runs          RunStore
	Conflicts     interface {
		Add(c state.Conflict) (uint64, error)
	}
	HeldDeletes interface {
		Is(connector, contactID string) (bool, error)
	}
	Inbox interface {
		PendingOf(contactID string) ([]state.InboxEvent, error)
		Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	}
	// Revisits are the records the write-back asks the pass to read
	// again (revisit.go); optional: nil when nothing writes back.
	Revisits interface {
		Revisits(connector string) ([]state.Revisit, error)
		DoneRevisits(rs []state.Revisit) error
	}
	// RecordEdits keeps the record edit times the pass read or an app
	// edit won by, for the write-back (appedits.go, observe.go);
	// optional like Revisits.
	RecordEdits interface {
		PutRecordEdits(connector, contactID string, es []state.RecordEdit) error
		PutRecordEditsOf(connector string, byContact map[string][]state.RecordEdit) error
		RecordEdits(connector, contactID string) (map[string]state.RecordEdit, error)
	}
	// Deletions records the contacts deleted because their record was
	// gone, for the write-back to weigh an app edit the DELETE met in
	// flight (state.ContactDeletion); optional like Revisits.
	Deletions interface {
		PutDeletion(d state.ContactDeletion) error
		DropDeletion(connector, contactID string) error
	}
	// Creates are the write-back's creates of records for contacts
	// made in the app (creating.go); optional like Revisits.
	Creates interface {
		Pending(connector string) ([]state.PendingCreate, error)
	}
	// Flights records each forward patch's flight, for the write-back to
	// weigh an app edit whose event came after the pass's last look
	// (state.Flight); optional like Revisits.
	Flights interface {
		PutFlight(connector, contactID string, f state.Flight)
	}
}

// StoreOf is the reconciler's view of st.
func StoreOf(st *state.Store) Store {
	return Store{
		Links:         st.Links,
		Checkpoints:   st.Checkpoints,
		DeadLetters:   st.DeadLetters,
		FieldWarnings: st.FieldWarnings,
		Matches:       st.Matches,
		Runs:          st.Runs,
		Conflicts:     st.Conflicts,
		HeldDeletes:   st.HeldDeletes,
		Inbox:         st.Inbox,
		Revisits:      st.Reverse,
		RecordEdits:   st.Reverse,
		Deletions:     st.Reverse,
		Flights:       st.Reverse,
		Creates:       st.Reverse,
	}
}

// complete reports whether every domain is set.
func (s Store) complete() bool {
	return s.Links != nil && s.Checkpoints != nil && s.DeadLetters != nil && s.FieldWarnings != nil &&
		s.Matches != nil && s.Runs != nil && s.Conflicts != nil && s.HeldDeletes != nil && s.Inbox != nil
}

// LinkStore is the links the reconciler reads and writes.
type LinkStore interface {
	ByContact(connector, contactID string) (l state.Link, ok bool, err error)
	Count(connector string) (int, error)
	Delete(connector, externalID string) error
	Digests(connector string, externalIDs []string) ([]state.LinkDigest, error)
	Drop(connector string) error
	ForEach(connector string, fn func(state.Link) error) error
	ForEachWhere(connector string, want func(externalID []byte) bool, fn func(state.Link) error) error
	Get(connector, externalID string) (l state.Link, ok bool, err error)
	Move(from string, l state.Link) error
	Put(l state.Link) error
	PutAll(ls []state.Link) error
}

// CheckpointStore is the read cursors and the mapping digest.
type CheckpointStore interface {
	Get(connector, name string) (string, error)
	Set(connector, name, value string) error
	MappingDigest(connector string) (string, error)
	SetMappingDigest(connector, digest string) error
}

// DeadLetterStore is the writes set aside and retried.
type DeadLetterStore interface {
	Add(d state.DeadLetter) (uint64, error)
	Clear(connector, operation, key string) error
	Delete(id uint64) error
	List(connector string) ([]state.DeadLetter, error)
}

// FieldWarningStore is the values a connector could not take.
type FieldWarningStore interface {
	List(connector string) ([]state.FieldWarning, error)
	Set(connector, key string, ws []state.FieldWarning) (fresh []state.FieldWarning, err error)
}

// MatchStore is the match index, its documents and the held matches.
type MatchStore interface {
	ClearIndex(connector string) error
	DeleteHeld(connector, externalID string) error
	Doc(connector, contactID string) (doc []byte, ok bool, err error)
	HasIndex(connector string) (bool, error)
	Held(connector string) (map[string][]byte, error)
	Lookup(connector, key string) ([]string, error)
	PutDocs(connector string, docs map[string][]byte) error
	PutHeld(connector, externalID string, payload []byte) error
	PutIndex(connector string, entries []state.IndexEntry) error
}

// RunStore is the run history.
type RunStore interface {
	Start(connector, kind string) (state.Run, error)
	Finish(r state.Run) error
}
