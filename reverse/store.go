package reverse

import "github.com/syncd-io/syncd/state"

// Store is the part of syncd's state the applier uses, domain by domain;
// StoreOf takes it from an open state file.
type Store struct {
	Inbox       InboxStore
	Reverse     ReverseStore
	HeldDeletes HeldDeleteStore
	Links       interface {
		ByContact(connector, contactID string) (l state.Link, ok bool, err error)
		Count(connector string) (int, error)
	}
	DeadLetters interface {
		Add(d state.DeadLetter) (uint64, error)
		Clear(connector, operation, key string) error
	}
	FieldWarnings interface {
		Of(connector, key string) ([]state.FieldWarning, error)
	}
}

// StoreOf is the applier's view of st.
func StoreOf(st *state.Store) Store {
	return Store{
		Inbox:         st.Inbox,
		Reverse:       st.Reverse,
		HeldDeletes:   st.HeldDeletes,
		Links:         st.Links,
		DeadLetters:   st.DeadLetters,
		FieldWarnings: st.FieldWarnings,
	}
}

// complete reports whether every domain is set.
func (s Store) complete() bool {
	return s.Inbox != nil && s.Reverse != nil && s.HeldDeletes != nil && s.Links != nil &&
		s.DeadLetters != nil && s.FieldWarnings != nil
}

// InboxStore is the acknowledged events the applier works through.
type InboxStore interface {
	Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	Pending(limit int) ([]state.InboxEvent, error)
	Update(e state.InboxEvent) error
}

// ReverseStore is the pending creates, the reverse-only values and the
// commit of a round.
type ReverseStore interface {
	Agreed(connector, contactID string) (map[string]string, error)
	Commit(c state.ReverseCommit) error
	DeletePending(connector, contactID string) error
	PendingOf(connector, contactID string) (p state.PendingCreate, ok bool, err error)
	PutPending(p state.PendingCreate) error
	RecordEdits(connector, contactID string) (map[string]state.RecordEdit, error)
	PutRecordEdits(connector, contactID string, es []state.RecordEdit) error
	PutRecordEditsOf(connector string, byContact map[string][]state.RecordEdit) error
	AppEdits(connector, contactID string) (map[string]state.RecordEdit, error)
	PutAppEdits(connector, contactID string, es []state.RecordEdit) error
	DeletionOf(connector, contactID string) (state.ContactDeletion, bool, error)
	FlightOf(connector, contactID string) (state.Flight, bool)
}

// HeldDeleteStore is the deletes held for an operator.
type HeldDeleteStore interface {
	Count(connector string) (int, error)
	Drop(connector string, contactIDs []string) error
	List(connector string) ([]state.HeldDelete, error)
	Put(ds []state.HeldDelete) error
}
