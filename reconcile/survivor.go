package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// findSurvivors gives the deleted records that left no merge trace
// (Deleted without MergedInto) the survivor the connector finds for them
// (connector.SurvivorFinder), from the e-mail addresses and phone numbers
// of their contacts: a record merged into another then hands its contact
// over (relinkMerged) instead of losing it while the survivor gets a new
// one. Records without a contact, and connectors that cannot tell, are
// left as they are.
func (mg *merger) findSurvivors(ctx context.Context, recs []connector.Record) error {
	r := mg.r
	finder, ok := r.opts.Reader.(connector.SurvivorFinder)
	if !ok {
		return nil
	}
	byExt := map[string]int{}
	var exts []string
	for i, rec := range recs {
		if rec.MergedInto != "" {
			continue
		}
		ext, err := r.opts.Mapper.ExternalID(rec)
		if err != nil {
			continue
		}
		if _, linked, err := mg.links.Get(r.opts.Connector, ext); err != nil {
			return fmt.Errorf("read link %s: %w", ext, err)
		} else if linked {
			byExt[ext] = i
			exts = append(exts, ext)
		}
	}
	if len(exts) == 0 {
		return nil
	}
	contacts, err := r.opts.Workspace.ContactsByExternalIDs(ctx, r.opts.Source, exts)
	if err != nil {
		return fmt.Errorf("read the contacts of deleted records: %w", err)
	}
	for _, c := range contacts {
		if c.ExternalID == nil {
			continue
		}
		i, ok := byExt[*c.ExternalID]
		if !ok {
			continue
		}
		var emails, phones []string
		for _, it := range c.DefaultFields.Emails {
			emails = append(emails, it.Value)
		}
		for _, it := range c.DefaultFields.PhoneNumbers {
			phones = append(phones, it.Value)
		}
		id, err := finder.Survivor(ctx, recs[i].ID, emails, phones)
		if err != nil {
			return fmt.Errorf("find the survivor of record %s: %w", recs[i].ID, err)
		}
		if id != "" && id != recs[i].ID {
			recs[i].MergedInto = id
			r.log.WithFields(map[string]any{logfield.Record: recs[i].ID, logfield.MergedInto: id, logfield.Contact: c.ID}).
				Info("deleted record's e-mail or phone is now the survivor's: taken as merged into it")
		}
	}
	return nil
}
