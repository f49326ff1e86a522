package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

// relinkMerged handles a record its system merged into another
// (connector.Record.MergedInto): when the survivor has no contact of its
// own, the merged record's contact becomes the survivor's (its externalId
// and link move there, and the survivor's values reach it as a change),
// rather than being deleted. It reports whether it handled the record; a
// survivor with a contact of its own leaves the merged record's contact a
// duplicate, for onSourceDelete.
func (p *pass) relinkMerged(ctx context.Context, rec connector.Record, ext string) (bool, error) {
	r := p.r
	into, err := r.opts.Mapper.ExternalID(connector.Record{ID: rec.MergedInto, Fields: map[string]any{"id": rec.MergedInto}})
	if err != nil {
		r.log.WithField("record_id", rec.ID).Warn("merged record: the survivor's externalId is not known from its id; handled as a deletion")
		return false, nil
	}
	l, ok, err := r.opts.Store.Link(r.opts.Connector, ext)
	if err != nil || !ok {
		return ok, err
	}
	if _, taken, err := r.opts.Store.Link(r.opts.Connector, into); err != nil || taken {
		return false, err
	}
	p.planned("relink", into, l.ContactID, nil, nil)
	if _, err := r.opts.Workspace.UpdateContact(ctx, l.ContactID, workspace.ContactPatch{ExternalID: workspace.Some(into)}); err != nil {
		if workspace.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("relink contact %s to merged record %s: %w", l.ContactID, into, err)
	}
	moved := l
	moved.ExternalID, moved.RecordID = into, rec.MergedInto
	// The survivor's values differ from what the contact holds: no hash
	// matches, so its record is compared and written.
	moved.WorkspaceHash, moved.SourceHash = "", ""
	// A contact has one link: drop the old before saving the new. A crash
	// between leaves the contact unlinked with the survivor's externalId,
	// which the next pass finds by it.
	if err := r.opts.Store.DeleteLink(r.opts.Connector, ext); err != nil {
		return false, fmt.Errorf("drop link %s: %w", ext, err)
	}
	if err := r.opts.Store.PutLink(moved); err != nil {
		return false, fmt.Errorf("save link %s: %w", into, err)
	}
	p.count(func(s *Summary) { s.Relinked++ })
	return true, nil
}
