package reconcile

import "github.com/syncd-io/syncd/policy"

// action is what the forward pass does next with one item. decide picks
// it from what is known of the item; the effects (batch's phases and
// execute) carry it out and record what they learn on the item, which
// may call for another action (a patch answered 404, a create whose
// answer was lost).
type action int

const (
	actUnchanged    action = iota // the link holds these values: no call
	actFillRecordID               // unchanged, but the link lacks the record's id or fingerprint: record them
	actSkipRefused                // refused before with these very values: no call until they change
	actLookUp                     // unlinked: look the externalId up first (batched, 50 a call)
	actMatch                      // unlinked and no contact carries the externalId: consult the match index
	actHold                       // matches ambiguously and onAmbiguous is hold: set aside for an operator
	actAwaitCreate                // the write-back is making this record's contact link (creating.go): left to it
	actPatch                      // linked: patch what differs from the link
	actDeleteRecord               // the linked contact was deleted in the workspace and onWorkspaceDelete is delete
	actForget                     // the contact was deleted in the workspace: drop the link, create it again
	actLinkFound                  // an unlinked contact carries the externalId and these values: link it
	actAdoptFound                 // an unlinked contact carries the externalId: link it and patch what differs
	actLinkMatch                  // a contact matches by phone or e-mail and onMatch is link: link it only
	actAdoptMatch                 // a contact matches and onMatch is adopt: take it over
	actResolve                    // a create's outcome is unknown: look it up before anything else
	actFailLost                   // the look-up after a lost create found nothing: this attempt fails
	actCreate                     // nothing to link or adopt: create the contact
)

var actionNames = [...]string{"unchanged", "fill-record-id", "skip-refused", "look-up", "match", "hold", "await-create",
	"patch", "delete-record", "forget", "link-found", "adopt-found", "link-match", "adopt-match",
	"resolve", "fail-lost", "create"}

func (a action) String() string { return actionNames[a] }

// writes reports whether the action belongs to the write phase (execute),
// after the batch's look-ups and matching.
func (a action) writes() bool { return a >= actPatch }

// rules are what decide needs of the pass and the connector's policies.
type rules struct {
	// listed: the whole workspace source was listed in this pass, so an
	// unlinked record that found nothing there has no contact.
	listed bool
	// indexed: the connector has a match index to consult.
	indexed           bool
	onWorkspaceDelete policy.Delete
	onMatch           policy.OnMatch
	onAmbiguous       policy.OnAmbiguous
}

// decide returns the next action for an item. It reads only the item and
// the rules: no call, no state.
func decide(it *item, ru rules) action {
	if it.link != nil {
		return decideLinked(it, ru)
	}
	switch {
	case it.creating != nil:
		return actAwaitCreate
	case it.refused:
		return actSkipRefused
	case it.gone:
		return actForget
	case !it.lookedUp && !ru.listed:
		return actLookUp
	case it.found != nil && it.foundHave.Hash() == it.hash:
		return actLinkFound
	case it.found != nil:
		return actAdoptFound
	case !it.matched && ru.indexed:
		return actMatch
	case it.match != nil && ru.onMatch == policy.MatchLink:
		return actLinkMatch
	case it.match != nil:
		return actAdoptMatch
	case it.ambiguous != nil && ru.onAmbiguous != policy.AmbiguousCreate:
		return actHold
	case it.uncertain:
		return actResolve
	case it.lost != nil:
		return actFailLost
	}
	return actCreate
}

// decideLinked is decide for an item with a link.
func decideLinked(it *item, ru rules) action {
	switch {
	case it.gone && ru.onWorkspaceDelete == policy.DeleteRemove:
		// Deleted in the workspace by a person, on a connector that
		// carries such deletions to the other system: creating it again
		// would undo the deletion.
		return actDeleteRecord
	case it.gone:
		return actForget
	case it.link.WorkspaceHash == it.hash && (it.link.RecordID != it.rec.ID || it.link.Fingerprint != it.fingerprint):
		// A link rebuilt from a listing knows no record id; write-back
		// needs it to address the record. A fingerprint that is missing
		// or stale (the mapping changed) is stored, so that the next pass
		// skips the record without mapping it.
		return actFillRecordID
	case it.link.WorkspaceHash == it.hash:
		return actUnchanged
	case it.refused:
		return actSkipRefused
	}
	return actPatch
}
