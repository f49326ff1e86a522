package reconcile

import "github.com/syncd-io/syncd/state"

// Store is the part of syncd's state the reconciler uses; *state.Store implements it.
type Store interface {
	AddConflict(c state.Conflict) (uint64, error)
	AddDeadLetter(d state.DeadLetter) (uint64, error)
	Checkpoint(connector, name string) (string, error)
	ClearDeadLetter(connector, operation, key string) error
	ClearIndex(connector string) error
	CountLinks(connector string) (int, error)
	DeadLetters(connector string) ([]state.DeadLetter, error)
	DeleteDeadLetter(id uint64) error
	DeleteHeld(connector, externalID string) error
	DeleteLink(connector, externalID string) error
	DropLinks(connector string) error
	FieldWarnings(connector string) ([]state.FieldWarning, error)
	FinishRun(r state.Run) error
	ForEachLink(connector string, fn func(state.Link) error) error
	ForEachLinkWhere(connector string, want func(externalID []byte) bool, fn func(state.Link) error) error
	HasIndex(connector string) (bool, error)
	Held(connector string) (map[string][]byte, error)
	IsHeldDelete(connector, contactID string) (bool, error)
	Link(connector, externalID string) (l state.Link, ok bool, err error)
	LinkByContact(connector, contactID string) (l state.Link, ok bool, err error)
	LinkDigests(connector string, externalIDs []string) ([]state.LinkDigest, error)
	LookupIndex(connector, key string) ([]string, error)
	MappingDigest(connector string) (string, error)
	MatchDoc(connector, contactID string) (doc []byte, ok bool, err error)
	MoveLink(from string, l state.Link) error
	PendingEventsOf(contactID string) ([]state.InboxEvent, error)
	PutHeld(connector, externalID string, payload []byte) error
	PutIndexEntries(connector string, entries []state.IndexEntry) error
	PutLink(l state.Link) error
	PutLinks(ls []state.Link) error
	PutMatchDocs(connector string, docs map[string][]byte) error
	SetCheckpoint(connector, name, value string) error
	SetFieldWarnings(connector, key string, ws []state.FieldWarning) (fresh []state.FieldWarning, err error)
	SetMappingDigest(connector, digest string) error
	StartRun(connector, kind string) (state.Run, error)
}

var _ Store = (*state.Store)(nil)
