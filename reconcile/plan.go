package reconcile

import (
	"sort"
	"sync"

	"github.com/syncd-io/syncd/mapping"
)

// planner is the plan hook of a resync or a dry run: each write is told
// to it as it is decided.
type planner struct {
	mu sync.Mutex
	fn func(PlanEntry)
}

// planned reports one write to the plan hook, if any.
func (pl *planner) planned(action, ext, contactID string, old, new mapping.Fields) {
	if pl.fn == nil {
		return
	}
	e := PlanEntry{Action: action, ExternalID: ext, ContactID: contactID}
	if action == "update" {
		keys := map[string]bool{}
		for k := range old {
			keys[k] = true
		}
		for k := range new {
			keys[k] = true
		}
		for k := range keys {
			if old[k] != new[k] {
				e.Changes = append(e.Changes, FieldChange{Field: k, Old: old[k], New: new[k]})
			}
		}
		sort.Slice(e.Changes, func(i, j int) bool { return e.Changes[i].Field < e.Changes[j].Field })
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.fn(e)
}

// PlanEntry is one write of a resync.
type PlanEntry struct {
	Action     string // create, update, delete, unlink
	ExternalID string
	ContactID  string
	Changes    []FieldChange // for updates: the fields that differ
}

// FieldChange is one field's old and new value in an update.
type FieldChange struct {
	Field, Old, New string
}
