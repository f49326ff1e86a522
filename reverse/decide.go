package reverse

import (
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
)

// verdict is what a round does with one contact's events for the
// connector they were routed to. decideGroup and decideUpdate pick it
// from what the round read (the contact, its link or pending create, the
// connector's policies) and touch nothing; applyTarget carries it out.
type verdict int

const (
	vIgnore          verdict = iota // the connector does not act on this version: acknowledge
	vStale                          // older than the version last applied: acknowledge
	vCompare                        // linked: compare with the values last agreed, then decideUpdate
	vEcho                           // the reverse targets hold what was agreed: record the link only
	vNoRecordID                     // a write-back is due but the link holds no record id: set aside
	vWrite                          // a write-back is due: read the record, settle conflicts, write
	vUnlink                         // deleted in the workspace; onWorkspaceDelete unlink (or delete on a read-only connector)
	vDelete                         // deleted in the workspace; onWorkspaceDelete delete: delete the record
	vNoDeleteID                     // delete wanted but the record's id is not known: set aside
	vDeletedCreating                // deleted while its record was being created: the record is left as it is
	vResume                         // a pending create has its record id: give the contact its externalId
	vCreateUnknown                  // a pending create has no record id: its outcome is unknown, set aside
	vCreate                         // made in the workspace: create its record
)

var verdictNames = [...]string{"ignore", "stale", "compare", "echo", "no-record-id", "write", "unlink",
	"delete", "no-delete-id", "deleted-creating", "resume", "create-unknown", "create"}

func (v verdict) String() string { return verdictNames[v] }

// decideGroup is the verdict on a contact's newest version.
func decideGroup(t *Target, g *group) verdict {
	switch {
	case g.link != nil && g.deleted:
		return decideDelete(t, g)
	case g.link != nil && !t.writesBack():
		return vIgnore
	case g.link != nil && g.contact.UpdatedAt.Before(g.link.ContactUpdatedAt):
		return vStale
	case g.link != nil:
		return vCompare
	case g.deleted && g.pending != nil:
		return vDeletedCreating
	case g.deleted:
		return vIgnore
	case g.pending != nil && g.pending.RecordID != "":
		return vResume
	case g.pending != nil && t.StagesCreates:
		return vCreate // its id never staged: never committed
	case g.pending != nil:
		return vCreateUnknown
	}
	return vCreate
}

// decideDelete follows onWorkspaceDelete for a linked contact deleted in
// the workspace.
func decideDelete(t *Target, g *group) verdict {
	switch {
	case t.OnWorkspaceDelete == policy.DeleteUnlink || (t.OnWorkspaceDelete == policy.DeleteRemove && t.Writer == nil):
		return vUnlink
	case t.OnWorkspaceDelete == policy.DeleteRemove && deleteID(t, g) == "":
		return vNoDeleteID
	case t.OnWorkspaceDelete == policy.DeleteRemove:
		return vDelete
	}
	return vIgnore
}

// deleteID is the id of the record to delete for a linked contact: the
// link's record id, else its externalId when that is the record's id.
func deleteID(t *Target, g *group) string {
	if id := g.link.RecordID; id != "" {
		return id
	}
	if _, err := t.Mapper.ExternalID(connector.Record{ID: g.link.ExternalID}); err == nil {
		return g.link.ExternalID
	}
	return ""
}

// decideUpdate is the verdict on a linked contact compared with what was
// agreed.
func decideUpdate(u *update) verdict {
	switch {
	case len(u.changed) == 0 && len(u.flight) == 0:
		return vEcho
	case u.recordID == "":
		return vNoRecordID
	}
	return vWrite
}
