package reverse

import "github.com/syncd-io/syncd/state"

// Store is the part of syncd's state the applier uses; *state.Store implements it.
type Store interface {
	AddDeadLetter(d state.DeadLetter) (uint64, error)
	ClearDeadLetter(connector, operation, key string) error
	CommitReverse(c state.ReverseCommit) error
	CountHeldDeletes(connector string) (int, error)
	CountLinks(connector string) (int, error)
	DeletePendingCreate(connector, contactID string) error
	DropHeldDeletes(connector string, contactIDs []string) error
	EnqueueEvent(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	FieldWarningsOf(connector, key string) ([]state.FieldWarning, error)
	HeldDeletes(connector string) ([]state.HeldDelete, error)
	LinkByContact(connector, contactID string) (l state.Link, ok bool, err error)
	PendingCreateOf(connector, contactID string) (p state.PendingCreate, ok bool, err error)
	PendingEvents(limit int) ([]state.InboxEvent, error)
	PutHeldDeletes(ds []state.HeldDelete) error
	PutPendingCreate(p state.PendingCreate) error
	ReverseAgreed(connector, contactID string) (map[string]string, error)
	UpdateEvent(e state.InboxEvent) error
}

var _ Store = (*state.Store)(nil)
