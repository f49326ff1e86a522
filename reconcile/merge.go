package reconcile

import (
	"context"
	"fmt"
	"maps"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
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
// onSourceDelete like a deletion; so does a contact the workspace refuses
// to move. It returns the records left to handle as deletions.
//
// The contact's externalId changes first, then the link moves (one
// state transaction): a crash in between leaves the merged record's link,
// and the batch, read again, makes the same move.
func (mg *merger) relinkMerged(ctx context.Context, recs []connector.Record) ([]connector.Record, error) {
	r := mg.r
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
		l, ok, err := mg.links.Get(r.opts.Connector, ext)
		if err != nil {
			return nil, fmt.Errorf("read link %s: %w", ext, err)
		}
		if !ok {
			continue // nothing was linked to it
		}
		log := r.log.WithFields(map[string]any{logfield.Record: rec.ID, logfield.MergedInto: rec.MergedInto, logfield.Contact: l.ContactID})
		survivor, known := survivorExternalID(r.opts.Mapper, rec)
		taken := false
		if known {
			if _, taken, err = mg.links.Get(r.opts.Connector, survivor); err != nil {
				return nil, fmt.Errorf("read link %s: %w", survivor, err)
			}
		}
		if !known || taken {
			log.Info("record merged into another that has its own contact; its contact follows onSourceDelete")
			plain = append(plain, rec)
			continue
		}
		moved, err := mg.moveContact(ctx, ext, l, survivor, rec.MergedInto)
		if err != nil {
			return nil, err
		}
		if !moved {
			log.Warn("the workspace refused to move the merged record's contact to the surviving record; it follows onSourceDelete")
			plain = append(plain, rec)
			continue
		}
		mg.tally.count(func(s *Summary) { s.Relinked++ })
		log.Info("record merged into another; its contact now follows the surviving record")
	}
	return plain, nil
}

// moveContact gives the contact of link l (of the record ext) the
// survivor's externalId, then moves the link to the survivor. It reports
// false when the workspace refused the move (or the contact is gone),
// with nothing changed. A crash between the two leaves the old link, and
// the batch, read again, moves the contact again (the same PATCH).
func (mg *merger) moveContact(ctx context.Context, ext string, l state.Link, survivor, recordID string) (bool, error) {
	r := mg.r
	mg.plan.planned("relink", survivor, l.ContactID, nil, nil)
	_, err := r.opts.Workspace.UpdateContact(ctx, l.ContactID, workspace.ContactPatch{ExternalID: workspace.Some(survivor)})
	switch {
	case workspace.IsNotFound(err) || workspace.IsValidation(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("move contact %s to the surviving record %s: %w", l.ContactID, recordID, err)
	}
	l.ExternalID, l.RecordID = survivor, recordID
	// The survivor's values may differ (the merge kept some of each
	// record's): the next read of it compares and writes them.
	l.WorkspaceHash, l.SourceHash = "", ""
	if err := mg.links.Move(ext, l); err != nil {
		return false, fmt.Errorf("move link %s to %s: %w", ext, survivor, err)
	}
	return true, nil
}

// merger is the step that follows merges at the source: the contact of a
// record merged into another moves to the survivor, with its link.
type merger struct {
	r     *Reconciler
	links interface {
		Get(connector, externalID string) (l state.Link, ok bool, err error)
		Move(from string, l state.Link) error
	}
	tally *tally
	plan  *planner
}

// survivorExternalID returns the externalId the survivor of a merge
// has: the record's own ID, or a field that holds it (as text, or as the
// number a PostgreSQL bigint id column reads as). It reports false
// when the externalId comes from a field the merged record does not
// share with the survivor (then the survivor's is unknown here).
func survivorExternalID(m *mapping.Mapper, rec connector.Record) (string, bool) {
	f := maps.Clone(rec.Fields)
	for k, v := range f {
		if v == rec.ID || (v != nil && fmt.Sprint(v) == rec.ID) {
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
