package reconcile

import (
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// item is one mapped record on its way to the workspace, with what the
// pass knows of it so far: decide reads these facts, the effects set them.
type item struct {
	rec    connector.Record
	mapped mapping.Mapped
	fields mapping.Fields // mapped fields plus the sourceUrl pseudo-field
	hash   string
	link   *state.Link // the record's link, when it has one
	// creating is, for a record without a link, the link a pending
	// create of the write-back promises it (creating.go).
	creating *state.Link
	// fingerprint is the raw record's fingerprint, when its link holds
	// the mapped values (the link keeps it, so that the next pass skips
	// the record without mapping it).
	fingerprint [8]byte
	// refused: a dead letter holds these very values, refused for good.
	refused bool
	// lookedUp: the externalId was looked up in the workspace (or needs
	// no look-up); found is the unlinked contact that carries it, and
	// foundHave what that contact holds of the mapped targets.
	lookedUp  bool
	found     *workspace.Contact
	foundHave mapping.Fields
	// matched: the match index was consulted (or needs not be); match is
	// the one contact without link that shares a phone or e-mail,
	// ambiguous the several that do.
	matched   bool
	match     *workspace.Contact
	ambiguous *ambiguity
	// gone: the contact the item was to be written to answered 404.
	gone bool
	// current is the linked contact as the workspace held it just before
	// the batch's writes (peekContacts), when the pass weighs app edits.
	current *workspace.Contact
	// uncertain is set when a create's outcome is unknown: the contact
	// may exist, so the next attempt looks before it creates. lost is
	// that create's error, within the attempt.
	uncertain bool
	lost      error
	// landed: the look-up after a create whose answer was lost found the
	// contact that create made; linking it counts as created.
	landed bool
}

// sourceURLKey holds the sourceUrl among a link's fields, so that a change
// of the template's output is seen as a change like any other.
const sourceURLKey = "sourceUrl"

// ContactFields are the values a link records for a mapped record: its
// fields plus the sourceUrl pseudo-field. Their Hash is what the
// reconciler compares with Link.WorkspaceHash.
func ContactFields(m mapping.Mapped) mapping.Fields {
	f := make(mapping.Fields, len(m.Fields)+1)
	for k, v := range m.Fields {
		f[k] = v
	}
	if m.SourceURL != "" {
		f[sourceURLKey] = m.SourceURL
	}
	return f
}

func keyOr(k, alt string) string {
	if k != "" {
		return k
	}
	return alt
}

// oldestByExternalID indexes contacts by externalId, keeping the oldest
// when several carry the same one (a duplicate made by someone else).
func oldestByExternalID(cs []workspace.Contact) map[string]workspace.Contact {
	out := make(map[string]workspace.Contact, len(cs))
	for _, c := range cs {
		if c.ExternalID == nil {
			continue
		}
		ext := connector.NormalizeID(*c.ExternalID)
		if have, ok := out[ext]; ok && !c.CreatedAt.Before(have.CreatedAt) {
			continue
		}
		out[ext] = c
	}
	return out
}

// setFound records the unlinked contact that carries the item's
// externalId, and what it holds of the mapped targets.
func (r *Reconciler) setFound(it *item, c *workspace.Contact) {
	it.found = c
	it.foundHave = r.workspaceFields(*c)
}

// workspaceFields reads the forward-mapped fields (and sourceUrl) of a
// contact, to compare with a mapped record.
func (r *Reconciler) workspaceFields(c workspace.Contact) mapping.Fields {
	f := r.opts.Mapper.FromContact(c).Only(r.opts.Mapper.ForwardTargets())
	if c.SourceURL != nil && *c.SourceURL != "" {
		f[sourceURLKey] = *c.SourceURL
	}
	return f
}

// ambiguity is a record that matches several contacts, or a contact that
// several records match.
type ambiguity struct {
	candidates []string
	reason     string
}
