// Package policy holds the typed values of a connector's policies: the
// direction it syncs in and what it does on a conflict, a delete, a
// create in the workspace, a match or an ambiguous match. config decodes
// them from YAML, reconcile and reverse act on them; this package imports
// nothing of syncd, so that each of them can use it.
//
// Every type is a string holding its YAML spelling. UnmarshalText accepts
// only the allowed spellings and otherwise returns a *ValueError naming
// the policy and the allowed values; the zero value "" is left to each
// user to read as its default.
package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Direction is which way a connector (or one mapped field) syncs.
type Direction string

// Directions.
const (
	ToWorkspace Direction = "to-workspace" // records to contacts only
	ToCRM       Direction = "to-crm"       // workspace edits to records only
	Both        Direction = "both"
)

// Conflict is which side wins when both changed the same field.
type Conflict string

// Conflict policies.
const (
	NewestWins    Conflict = "newest-wins"
	WorkspaceWins Conflict = "workspace-wins"
	CRMWins       Conflict = "crm-wins"
)

// WorkspaceWins reports whether, under c, the workspace's edit of a field
// wins over the other system's edit of it, each at its own time:
// workspace-wins and crm-wins say so whatever the times; newest-wins (and
// "") picks the later edit, the workspace's on a tie, and an edit of the
// other system without a time loses. Both directions settle a conflict
// by it, so that they settle it alike.
func (c Conflict) WorkspaceWins(workspaceAt, recordAt time.Time) bool {
	switch c {
	case WorkspaceWins:
		return true
	case CRMWins:
		return false
	}
	return recordAt.IsZero() || !workspaceAt.Before(recordAt)
}

// Delete is what a delete on one side does to the other (onSourceDelete,
// onWorkspaceDelete).
type Delete string

// Delete policies.
const (
	DeleteIgnore Delete = "ignore" // keep the other side and its link
	DeleteUnlink Delete = "unlink" // forget the link, keep the other side
	DeleteRemove Delete = "delete" // delete the other side too
)

// Create is what a contact created in the workspace does
// (onWorkspaceCreate).
type Create string

// Create policies.
const (
	CreateIgnore Create = "ignore" // leave it in the workspace only
	CreateRecord Create = "create" // create a record for it
)

// OnMatch is what a record that matches exactly one existing contact
// does at a first sync or a resync (onMatch).
type OnMatch string

// Match policies.
const (
	MatchAdopt  OnMatch = "adopt"  // link the contact and write the record's fields to it
	MatchLink   OnMatch = "link"   // record the link only; the contact's fields are left alone
	MatchCreate OnMatch = "create" // ignore matches
)

// OnAmbiguous is what a record that matches several contacts, or a
// contact several records match, does (onAmbiguous).
type OnAmbiguous string

// Ambiguous-match policies.
const (
	AmbiguousHold   OnAmbiguous = "hold"   // keep the record aside for an operator
	AmbiguousCreate OnAmbiguous = "create" // create a new contact anyway
)

// EditAfterDelete is what an edit made on one side after the record or
// contact was deleted on the other does (editAfterDelete): an edit later
// than the delete by more than RaceWindow. Either way the case goes to
// the conflict journal.
type EditAfterDelete string

// Edit-after-delete rules.
const (
	EditWins   EditAfterDelete = "edit-wins"   // the edited side stays; the delete is not carried over
	DeleteWins EditAfterDelete = "delete-wins" // the delete is carried over; the edit is dropped
)

// RaceWindow is how close an edit and a delete on the two sides are
// taken for a race, which the delete wins whatever EditAfterDelete says.
const RaceWindow = 3 * time.Second

// EditWinsAfter reports whether an edit at editAt survives a delete on
// the other side at deleteAt under e ("" is edit-wins): only an edit later
// than the delete by more than RaceWindow does, and only with edit-wins.
func (e EditAfterDelete) EditWinsAfter(editAt, deleteAt time.Time) bool {
	return e != DeleteWins && editAt.Sub(deleteAt) > RaceWindow
}

var (
	editAfterDeletes = []EditAfterDelete{EditWins, DeleteWins}
	directions       = []Direction{ToWorkspace, ToCRM, Both}
	conflicts        = []Conflict{NewestWins, WorkspaceWins, CRMWins}
	deletes          = []Delete{DeleteIgnore, DeleteUnlink, DeleteRemove}
	creates          = []Create{CreateIgnore, CreateRecord}
	onMatches        = []OnMatch{MatchAdopt, MatchLink, MatchCreate}
	ambiguities      = []OnAmbiguous{AmbiguousHold, AmbiguousCreate}
)

// ValueError is a text that is none of a policy's allowed values.
type ValueError struct {
	Policy  string   // "direction", "conflict", ...
	Value   string   // the text given
	Allowed []string // the allowed values, in documentation order
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("unknown %s %q: use one of: %s", e.Policy, e.Value, strings.Join(e.Allowed, ", "))
}

func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// parse sets *dst to text when it is one of allowed.
func parse[T ~string](dst *T, text []byte, allowed []T, policy string) error {
	v := T(text)
	if !slices.Contains(allowed, v) {
		return &ValueError{Policy: policy, Value: string(text), Allowed: names(allowed)}
	}
	*dst = v
	return nil
}

func (d Direction) String() string       { return string(d) }
func (c Conflict) String() string        { return string(c) }
func (d Delete) String() string          { return string(d) }
func (c Create) String() string          { return string(c) }
func (m OnMatch) String() string         { return string(m) }
func (a OnAmbiguous) String() string     { return string(a) }
func (e EditAfterDelete) String() string { return string(e) }

// Valid reports whether d is an allowed value ("" is not).
func (d Direction) Valid() bool       { return slices.Contains(directions, d) }
func (c Conflict) Valid() bool        { return slices.Contains(conflicts, c) }
func (d Delete) Valid() bool          { return slices.Contains(deletes, d) }
func (c Create) Valid() bool          { return slices.Contains(creates, c) }
func (m OnMatch) Valid() bool         { return slices.Contains(onMatches, m) }
func (a OnAmbiguous) Valid() bool     { return slices.Contains(ambiguities, a) }
func (e EditAfterDelete) Valid() bool { return slices.Contains(editAfterDeletes, e) }

// Allowed lists the allowed values, in documentation order.
func (Direction) Allowed() []string       { return names(directions) }
func (Conflict) Allowed() []string        { return names(conflicts) }
func (Delete) Allowed() []string          { return names(deletes) }
func (Create) Allowed() []string          { return names(creates) }
func (OnMatch) Allowed() []string         { return names(onMatches) }
func (OnAmbiguous) Allowed() []string     { return names(ambiguities) }
func (EditAfterDelete) Allowed() []string { return names(editAfterDeletes) }

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (e *EditAfterDelete) UnmarshalText(text []byte) error {
	return parse(e, text, editAfterDeletes, "editAfterDelete rule")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (d *Direction) UnmarshalText(text []byte) error {
	return parse(d, text, directions, "direction")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (c *Conflict) UnmarshalText(text []byte) error {
	return parse(c, text, conflicts, "conflict policy")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (d *Delete) UnmarshalText(text []byte) error {
	return parse(d, text, deletes, "delete policy")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (c *Create) UnmarshalText(text []byte) error {
	return parse(c, text, creates, "create policy")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (m *OnMatch) UnmarshalText(text []byte) error {
	return parse(m, text, onMatches, "match policy")
}

// UnmarshalText accepts one of the allowed values, exactly as spelled.
func (a *OnAmbiguous) UnmarshalText(text []byte) error {
	return parse(a, text, ambiguities, "ambiguous-match policy")
}

// WritesBack reports whether the direction takes edits made in the
// workspace back to the other system.
func (d Direction) WritesBack() bool { return d == ToCRM || d == Both }
