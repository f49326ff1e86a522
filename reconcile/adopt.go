package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// linkMatch records the link to a matched contact (onMatch link); the
// contact's fields are left alone.
func (w *writer) linkMatch(it *item) error {
	c := *it.match
	_, ids, _ := matchedFields(w.r.workspaceFields(c), mapping.ItemIDs(c), c, it.fields)
	w.plan.planned("link", it.mapped.ExternalID, c.ID, nil, nil)
	if err := w.saveLinkIDs(it, c, ids); err != nil {
		return err
	}
	w.tally.count(func(s *Summary) { s.Adopted++ })
	return nil
}

// adoptMatch takes over a matched contact (onMatch adopt): it sets the
// contact's externalId and source and the record's values under the
// conflict policy (a value someone typed in the workspace is not blindly
// overwritten). A contact deleted since the listing marks the item gone.
func (w *writer) adoptMatch(ctx context.Context, it *item) (bool, error) {
	r := w.r
	c := *it.match
	have, ids, relabel := matchedFields(w.r.workspaceFields(c), mapping.ItemIDs(c), c, it.fields)
	desired, lost := w.resolveAdoption(have, it, c)
	body := patchBody(have, desired, ids)
	relabelItems(&body, relabel, desired)
	body.ExternalID = workspace.Some(it.mapped.ExternalID)
	body.Source = workspace.Some(r.opts.Source)
	w.plan.planned("adopt", it.mapped.ExternalID, c.ID, have, desired)
	got, err := r.opts.Workspace.UpdateContact(ctx, c.ID, body)
	if workspace.IsNotFound(err) {
		it.gone = true
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("adopt contact %s: %w", c.ID, err)
	}
	if lost != nil {
		if _, err := w.conflicts.Add(*lost); err != nil {
			return true, fmt.Errorf("record conflict: %w", err)
		}
	}
	if err := w.saveLinkIDs(it, got, ids); err != nil {
		return true, err
	}
	w.tally.count(func(s *Summary) { s.Adopted++ })
	return true, nil
}

// matchedFields is what a matched contact holds for the mapped targets.
// A phone or e-mail the record maps to one label but that the contact
// keeps under another counts as held already (at that item), so that
// adopting never adds the same number twice; relabel names those items
// (target -> item id), which the adoption moves to the mapped label.
func matchedFields(have mapping.Fields, ids map[string]string, c workspace.Contact, want mapping.Fields) (mapping.Fields, map[string]string, map[string]string) {
	relabel := map[string]string{}
	for target, v := range want {
		if have[target] == v {
			continue
		}
		var items []workspace.Item
		var normalize func(string) (string, error)
		switch {
		case strings.HasPrefix(target, "phoneNumbers."):
			items = c.DefaultFields.PhoneNumbers
			normalize = func(s string) (string, error) { return mapping.NormalizePhone(s, mapping.DefaultRegion) }
		case strings.HasPrefix(target, "emails."):
			items = c.DefaultFields.Emails
			normalize = mapping.NormalizeEmail
		default:
			continue
		}
		for _, item := range items {
			if n, err := normalize(item.Value); err == nil && n == v {
				have[target], ids[target], relabel[target] = v, item.ID, item.ID
				break
			}
		}
	}
	return have, ids, relabel
}

// relabelItems adds to an adoption's body the moves of matched items to
// the labels the mapping gives them, so that the contact then reads the
// same through the mapping as the record (and a later listing, after a
// lost state file, finds nothing to change).
func relabelItems(body *workspace.ContactPatch, relabel map[string]string, desired mapping.Fields) {
	for target, id := range relabel {
		kind, label, _ := strings.Cut(target, ".")
		v := desired[target]
		ip := workspace.ItemPatch{ID: id, Name: label, Value: &v}
		if body.DefaultFields == nil {
			body.DefaultFields = &workspace.DefaultFieldsPatch{}
		}
		if kind == "emails" {
			body.DefaultFields.Emails = append(body.DefaultFields.Emails, ip)
		} else {
			body.DefaultFields.PhoneNumbers = append(body.DefaultFields.PhoneNumbers, ip)
		}
	}
}

// resolveAdoption merges the record's values into what the contact holds:
// empty fields take the record's value; a field both sides fill
// differently goes to the winner of the conflict policy (newest-wins
// compares the record's change time with the contact's, and keeps the
// contact's value when the record has no time, as CSV rows do). The
// losing values are returned as a conflict for the journal.
func (w *writer) resolveAdoption(have mapping.Fields, it *item, c workspace.Contact) (mapping.Fields, *state.Conflict) {
	r := w.r
	conflict := r.conflictPolicy()
	crmWins := conflict == policy.CRMWins ||
		(conflict == policy.NewestWins && !it.rec.UpdatedAt.IsZero() && it.rec.UpdatedAt.After(c.UpdatedAt))
	desired := make(mapping.Fields, len(have)+len(it.fields))
	for k, v := range have {
		desired[k] = v
	}
	wsLost, srcLost := map[string]string{}, map[string]string{}
	for k, v := range it.fields {
		h := have[k]
		switch {
		case h == "" || h == v:
			desired[k] = v
		case crmWins:
			desired[k] = v
			wsLost[k] = h
		default:
			srcLost[k] = v
		}
	}
	if len(wsLost)+len(srcLost) == 0 {
		return desired, nil
	}
	winner := "workspace"
	if crmWins {
		winner = r.opts.Connector
	}
	lostWS, lostSrc := map[string]string{}, map[string]string{}
	for k := range wsLost {
		lostWS[k], lostSrc[k] = have[k], it.fields[k]
	}
	for k := range srcLost {
		lostWS[k], lostSrc[k] = have[k], it.fields[k]
	}
	return desired, &state.Conflict{
		Connector: r.opts.Connector, ExternalID: it.mapped.ExternalID, ContactID: c.ID,
		Policy: conflict.String(), Winner: winner, Workspace: lostWS, Source: lostSrc, At: r.opts.Now(),
	}
}

// saveLinkIDs is saveLink with item ids found by matching.
func (w *writer) saveLinkIDs(it *item, c workspace.Contact, ids map[string]string) error {
	if err := w.saveLink(it, c); err != nil {
		return err
	}
	l, ok, err := w.links.Get(w.r.opts.Connector, it.mapped.ExternalID)
	if err != nil || !ok {
		return fmt.Errorf("reread link %s: %w", it.mapped.ExternalID, err)
	}
	for k, v := range mapping.ItemIDs(c) {
		ids[k] = v
	}
	l.ItemIDs = ids
	return w.links.Put(l)
}
