package reconcile

import (
	"context"
	"fmt"
	"maps"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// relinkMerged moves the links of records merged into another (Deleted
// with MergedInto) to the surviving record: the contact takes the
// survivor's externalId and its link is keyed by it, so that the
// survivor's values update that contact instead of creating another.
// When the survivor has a contact of its own already, the merged
// record's contact is the duplicate the merge did away with, and follows
// onSourceDelete like a deletion. It returns the records left to handle
// as deletions.
//
// The old link goes first, then the contact's externalId, then the new
// link: a crash in between leaves a contact that carries the survivor's
// externalId and no link, which the next pass adopts by externalId.
func (p *pass) relinkMerged(ctx context.Context, recs []connector.Record) ([]connector.Record, error) {
	r := p.r
	var plain []connector.Record
	for _, rec := range recs {
		if rec.MergedInto == "" {
			plain = append(plain, rec)
			continue
		}
		ext, err := r.opts.Mapper.ExternalID(rec)
		if err != nil {
			plain = append(plain, rec)
			continue
		}
		l, ok, err := r.opts.Store.Link(r.opts.Connector, ext)
		if err != nil {
			return nil, fmt.Errorf("read link %s: %w", ext, err)
		}
		if !ok {
			continue // nothing was linked to it
		}
		survivor, known := survivorExternalID(r.opts.Mapper, rec)
		_, taken, err := r.opts.Store.Link(r.opts.Connector, survivor)
		if err != nil {
			return nil, fmt.Errorf("read link %s: %w", survivor, err)
		}
		log := r.log.WithFields(map[string]any{"record_id": rec.ID, "merged_into": rec.MergedInto, "contact": l.ContactID})
		if !known || taken {
			log.Info("record merged into another that has its own contact; its contact follows onSourceDelete")
			plain = append(plain, rec)
			continue
		}
		p.planned("relink", survivor, l.ContactID, nil, nil)
		if err := r.opts.Store.DeleteLink(r.opts.Connector, ext); err != nil {
			return nil, fmt.Errorf("drop link %s: %w", ext, err)
		}
		_, err = r.opts.Workspace.UpdateContact(ctx, l.ContactID, workspace.ContactPatch{ExternalID: workspace.Some(survivor)})
		if workspace.IsNotFound(err) {
			continue // the contact is gone too: nothing to move
		}
		if err != nil {
			return nil, fmt.Errorf("move contact %s to the surviving record %s: %w", l.ContactID, rec.MergedInto, err)
		}
		l.ExternalID, l.RecordID = survivor, rec.MergedInto
		// The survivor's values may differ (the merge kept some of each
		// record's): the next read of it compares and writes them.
		l.WorkspaceHash, l.SourceHash = "", ""
		if err := r.opts.Store.PutLinks([]state.Link{l}); err != nil {
			return nil, fmt.Errorf("save link %s: %w", survivor, err)
		}
		p.count(func(s *Summary) { s.Relinked++ })
		log.Info("record merged into another; its contact now follows the surviving record")
	}
	return plain, nil
}

// survivorExternalID returns the externalId the survivor of a merge
// has: the record's own ID, or a field that holds it. It reports false
// when the externalId comes from a field the merged record does not
// share with the survivor (then the survivor's is unknown here).
func survivorExternalID(m *mapping.Mapper, rec connector.Record) (string, bool) {
	f := maps.Clone(rec.Fields)
	for k, v := range f {
		if v == rec.ID {
			f[k] = rec.MergedInto
		}
	}
	own, err := m.ExternalID(rec)
	if err != nil {
		return "", false
	}
	ext, err := m.ExternalID(connector.Record{ID: rec.MergedInto, Fields: f})
	if err != nil || ext == own {
		return "", false
	}
	return ext, true
}
