package reconcile

import (
	"errors"
	"testing"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

func TestDecide(t *testing.T) {
	want := mapping.Fields{"firstName": "Ada", "lastName": "Lovelace"}
	other := mapping.Fields{"firstName": "Ada", "lastName": "Byron"}
	linked := func(f mapping.Fields, recordID string) *state.Link {
		return &state.Link{ContactID: "CT1", RecordID: recordID, WorkspaceHash: f.Hash()}
	}
	contact := &workspace.Contact{ID: "CT2"}
	lost := errors.New("answer lost")
	defaults := rules{onWorkspaceDelete: policy.DeleteIgnore, onMatch: policy.MatchAdopt, onAmbiguous: policy.AmbiguousHold}
	indexed := defaults
	indexed.indexed = true
	listed := defaults
	listed.listed = true
	deleting := defaults
	deleting.onWorkspaceDelete = policy.DeleteRemove
	linking := indexed
	linking.onMatch = policy.MatchLink
	creating := indexed
	creating.onAmbiguous = policy.AmbiguousCreate

	tests := []struct {
		name  string
		it    item
		rules rules
		want  action
	}{
		// Linked records.
		{name: "link holds the values", it: item{link: linked(want, "r1")}, rules: defaults, want: actUnchanged},
		{name: "link holds the values but no record id", it: item{link: linked(want, "")}, rules: defaults, want: actFillRecordID},
		{name: "link holds other values", it: item{link: linked(other, "r1")}, rules: defaults, want: actPatch},
		{name: "linked, refused before with these values", it: item{link: linked(other, "r1"), refused: true}, rules: defaults, want: actSkipRefused},
		{name: "linked, unchanged although refused before", it: item{link: linked(want, "r1"), refused: true}, rules: defaults, want: actUnchanged},
		{name: "linked contact deleted in the workspace", it: item{link: linked(other, "r1"), gone: true}, rules: defaults, want: actForget},
		{name: "linked contact deleted, onWorkspaceDelete delete", it: item{link: linked(other, "r1"), gone: true}, rules: deleting, want: actDeleteRecord},
		{name: "linked, onWorkspaceDelete delete, contact there", it: item{link: linked(other, "r1")}, rules: deleting, want: actPatch},

		// Unlinked records before the writes.
		{name: "unlinked, refused before", it: item{refused: true}, rules: defaults, want: actSkipRefused},
		{name: "unlinked, not looked up", it: item{}, rules: defaults, want: actLookUp},
		{name: "unlinked, workspace listed in this pass", it: item{}, rules: listed, want: actCreate},
		{name: "looked up, nothing found, no index", it: item{lookedUp: true}, rules: defaults, want: actCreate},
		{name: "looked up, nothing found, index", it: item{lookedUp: true}, rules: indexed, want: actMatch},
		{name: "found with the same values", it: item{lookedUp: true, found: contact, foundHave: want}, rules: indexed, want: actLinkFound},
		{name: "found with other values", it: item{lookedUp: true, found: contact, foundHave: other}, rules: indexed, want: actAdoptFound},
		{name: "found wins over a match", it: item{lookedUp: true, matched: true, found: contact, foundHave: other, match: contact}, rules: indexed, want: actAdoptFound},
		{name: "one match, onMatch adopt", it: item{lookedUp: true, matched: true, match: contact}, rules: indexed, want: actAdoptMatch},
		{name: "one match, onMatch link", it: item{lookedUp: true, matched: true, match: contact}, rules: linking, want: actLinkMatch},
		{name: "no match", it: item{lookedUp: true, matched: true}, rules: indexed, want: actCreate},
		{name: "ambiguous, onAmbiguous hold", it: item{lookedUp: true, matched: true, ambiguous: &ambiguity{}}, rules: indexed, want: actHold},
		{name: "ambiguous, onAmbiguous create", it: item{lookedUp: true, matched: true, ambiguous: &ambiguity{}}, rules: creating, want: actCreate},

		// What the writes learn.
		{name: "found contact deleted before the patch", it: item{lookedUp: true, found: contact, foundHave: other, gone: true}, rules: defaults, want: actForget},
		{name: "matched contact deleted before the adoption", it: item{lookedUp: true, matched: true, match: contact, gone: true}, rules: indexed, want: actForget},
		{name: "create's answer lost", it: item{lookedUp: true, matched: true, uncertain: true, lost: lost}, rules: indexed, want: actResolve},
		{name: "uncertain from an earlier attempt", it: item{lookedUp: true, uncertain: true}, rules: defaults, want: actResolve},
		{name: "look-up after a lost create found nothing", it: item{lookedUp: true, lost: lost}, rules: defaults, want: actFailLost},
		{name: "look-up after a lost create found it", it: item{lookedUp: true, found: contact, foundHave: want}, rules: defaults, want: actLinkFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := tt.it
			it.fields, it.hash = want, want.Hash()
			it.rec.ID = "r1"
			if got := decide(&it, tt.rules); got != tt.want {
				t.Errorf("decide = %s, want %s", got, tt.want)
			}
		})
	}
}

// Every action has a name, and only the write actions reach execute.
func TestActionNames(t *testing.T) {
	for a := actUnchanged; a <= actCreate; a++ {
		if a.String() == "" {
			t.Errorf("action %d has no name", a)
		}
	}
	for _, a := range []action{actUnchanged, actFillRecordID, actSkipRefused, actLookUp, actMatch, actHold} {
		if a.writes() {
			t.Errorf("%s is a write action", a)
		}
	}
	for _, a := range []action{actPatch, actDeleteRecord, actForget, actLinkFound, actAdoptFound, actLinkMatch, actAdoptMatch, actResolve, actFailLost, actCreate} {
		if !a.writes() {
			t.Errorf("%s is not a write action", a)
		}
	}
}
