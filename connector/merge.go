package connector

import "context"

// SurvivorFinder is implemented by connectors whose system merges two
// records into one without always leaving a trace their reads report: the
// merged-away record then arrives as a Deleted record without MergedInto.
// The reconciler asks, for such a record that has a contact, whether a
// live record took its place, so that the contact follows the survivor
// (as with MergedInto) instead of being deleted while the survivor gets a
// new one.
type SurvivorFinder interface {
	// Survivor returns the ID of the one live record, other than
	// deletedID, that holds one of the given e-mail addresses or phone
	// numbers (the deleted record's, as its contact has them); "" when
	// no record or more than one does, or when the connector cannot tell
	// without calls it does not make for this.
	Survivor(ctx context.Context, deletedID string, emails, phones []string) (string, error)
}
