package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// errAbort marks failures that concern the whole run (bad credentials),
// not one record: the pass stops instead of setting records aside.
var errAbort = errors.New("run aborted")

// write brings one item's contact in line with its record, retrying
// transient failures with backoff and setting the record aside as a dead
// letter when it is refused or keeps failing. It returns an error only
// when the whole pass must stop.
func (p *pass) write(ctx context.Context, it *item) error {
	r := p.r
	wait := r.opts.Backoff
	for attempt := 1; ; attempt++ {
		err := p.writeOnce(ctx, it)
		if err == nil {
			p.clearDeadLetter(it)
			return nil
		}
		if workspace.IsUnauthorized(err) {
			return fmt.Errorf("%w: %w", errAbort, err)
		}
		if ctx.Err() != nil {
			// The drain after a shutdown request ran out (see
			// writeContext): the record did not fail, it was cut short.
			// Stop the batch without setting it aside; the batch is not
			// checkpointed, so the next run writes it, looking up a
			// create that may have been applied before making another.
			return fmt.Errorf("write %s cut short by shutdown: %w", it.mapped.ExternalID, err)
		}
		permanent := !workspace.IsTransient(err) && !errors.Is(err, workspace.ErrOutcomeUnknown)
		if permanent || attempt >= r.opts.MaxAttempts {
			p.setAside(ctx, opSync, it.mapped.ExternalID, it.rec, it.hash, permanent, err)
			return nil
		}
		r.log.WithError(err).WithField("external_id", it.mapped.ExternalID).WithField("attempt", attempt).Debug("write failed, retrying")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, 10*time.Second)
	}
}

// writeOnce makes one attempt: patch a linked contact, adopt a found one,
// or create.
func (p *pass) writeOnce(ctx context.Context, it *item) error {
	switch {
	case it.link != nil:
		return p.patch(ctx, it, it.link.ContactID, mapping.Fields(it.link.Fields), it.link.ItemIDs)
	case it.found != nil:
		return p.adopt(ctx, it)
	case it.match != nil:
		return p.adoptMatch(ctx, it)
	case it.uncertain:
		// An earlier attempt's create may have been applied: look first.
		return p.resolveUncertain(ctx, it, nil)
	default:
		return p.create(ctx, it)
	}
}

// patch sends only the fields that differ from have.
func (p *pass) patch(ctx context.Context, it *item, contactID string, have mapping.Fields, itemIDs map[string]string) error {
	body := patchBody(have, it.fields, itemIDs)
	p.planned("update", it.mapped.ExternalID, contactID, have, it.fields)
	c, err := p.r.opts.Workspace.UpdateContact(ctx, contactID, body)
	if workspace.IsNotFound(err) && p.r.opts.OnWorkspaceDelete == policy.DeleteRemove && it.link != nil {
		// Deleted in the workspace by a person, on a connector that
		// carries such deletions to the other system: creating it again
		// would undo the deletion, so the deletion is applied here (the
		// reverse applier may do the same; deleting twice is harmless).
		return p.applyWorkspaceDelete(ctx, it)
	}
	if workspace.IsNotFound(err) {
		// Deleted in the workspace since it was linked: the record still
		// exists at the source, so it is created again.
		if derr := p.r.opts.Store.DeleteLink(p.r.opts.Connector, it.mapped.ExternalID); derr != nil {
			return fmt.Errorf("drop link %s: %w", it.mapped.ExternalID, derr)
		}
		it.link, it.found = nil, nil
		return p.create(ctx, it)
	}
	if err != nil {
		return fmt.Errorf("patch contact %s: %w", contactID, err)
	}
	if err := p.saveLink(it, c); err != nil {
		return err
	}
	p.count(func(s *Summary) { s.Updated++ })
	return nil
}

// patchBody is mapping.PatchBody plus the sourceUrl pseudo-field.
func patchBody(have, want mapping.Fields, itemIDs map[string]string) workspace.ContactPatch {
	body := mapping.PatchBody(have, want, itemIDs)
	if h, w := have[sourceURLKey], want[sourceURLKey]; h != w {
		if w == "" {
			body.SourceURL = workspace.Null[string]()
		} else {
			body.SourceURL = workspace.Some(w)
		}
	}
	return body
}

// adopt links a contact that already carries the record's externalId and
// patches what differs.
func (p *pass) adopt(ctx context.Context, it *item) error {
	c := *it.found
	have := p.workspaceFields(c)
	if have.Hash() == it.hash {
		if err := p.saveLink(it, c); err != nil {
			return err
		}
		p.count(func(s *Summary) { s.Unchanged++ })
		return nil
	}
	return p.patch(ctx, it, c.ID, have, mapping.ItemIDs(c))
}

// workspaceFields reads the forward-mapped fields (and sourceUrl) of a
// contact, to compare with a mapped record.
func (p *pass) workspaceFields(c workspace.Contact) mapping.Fields {
	f := p.r.opts.Mapper.FromContact(c).Only(p.r.opts.Mapper.ForwardTargets())
	if c.SourceURL != nil && *c.SourceURL != "" {
		f[sourceURLKey] = *c.SourceURL
	}
	return f
}

// create makes the contact. When the answer is lost (the write may or may
// not have been applied) or the service failed, it looks the externalId
// up before anything else, and adopts what it finds.
func (p *pass) create(ctx context.Context, it *item) error {
	r := p.r
	p.planned("create", it.mapped.ExternalID, "", nil, it.fields)
	c, err := r.opts.Workspace.CreateContact(ctx, mapping.CreateBody(r.opts.Source, it.mapped))
	if err == nil {
		if err := p.saveLink(it, c); err != nil {
			return err
		}
		p.count(func(s *Summary) { s.Created++ })
		return nil
	}
	if !errors.Is(err, workspace.ErrOutcomeUnknown) && !workspace.IsTransient(err) {
		return fmt.Errorf("create contact %s: %w", it.mapped.ExternalID, err)
	}
	it.uncertain = true
	return p.resolveUncertain(ctx, it, err)
}

// resolveUncertain looks up a record whose create may have been applied.
// Until a look-up answers, the item stays uncertain and is never created
// again: a retry starts with the look-up.
func (p *pass) resolveUncertain(ctx context.Context, it *item, cause error) error {
	r := p.r
	found, err := r.opts.Workspace.ContactsByExternalIDs(ctx, r.opts.Source, []string{it.mapped.ExternalID})
	if err != nil {
		return fmt.Errorf("look up contact %s after a failed create: %w", it.mapped.ExternalID, errors.Join(cause, err))
	}
	it.uncertain = false
	if c, ok := oldestByExternalID(found)[it.mapped.ExternalID]; ok {
		it.found = &c
		r.log.WithField("external_id", it.mapped.ExternalID).Info("create was applied although its answer was lost; adopting the contact")
		return p.adopt(ctx, it)
	}
	if cause != nil {
		return fmt.Errorf("create contact %s: %w", it.mapped.ExternalID, cause)
	}
	return p.create(ctx, it)
}

// saveLink records that contact c now holds the item's values.
func (p *pass) saveLink(it *item, c workspace.Contact) error {
	r := p.r
	now := r.opts.Now()
	l := state.Link{}
	if it.link != nil {
		l = *it.link
	}
	l.Connector = r.opts.Connector
	l.ExternalID = it.mapped.ExternalID
	l.ContactID = c.ID
	l.RecordID = it.rec.ID
	l.Fields = map[string]string(it.fields)
	l.ItemIDs = mapping.ItemIDs(c)
	l.WorkspaceHash = it.hash
	l.SourceHash = it.hash
	l.Fingerprint = r.opts.Mapper.Fingerprint(it.rec, it.hash)
	l.WorkspaceWrittenAt = now
	l.ContactUpdatedAt = c.UpdatedAt
	l.SourceUpdatedAt = it.rec.UpdatedAt
	l.LastSeenRun = p.run.ID
	if err := r.opts.Store.PutLink(l); err != nil {
		return fmt.Errorf("save link %s: %w", l.ExternalID, err)
	}
	return nil
}

// applyWorkspaceDelete deletes the record of a contact deleted in the
// workspace (soft where the connector can), then drops the link.
func (p *pass) applyWorkspaceDelete(ctx context.Context, it *item) error {
	r := p.r
	if w, ok := r.opts.Reader.(connector.Writer); ok && it.link.RecordID != "" {
		res, err := w.Write(ctx, []connector.Change{{Op: connector.OpDelete, ID: it.link.RecordID, Soft: r.opts.Type.SoftDelete}})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		if err != nil && !errors.Is(err, connector.ErrNotFound) {
			return fmt.Errorf("delete record %s of a contact deleted in the workspace: %w", it.link.RecordID, err)
		}
	}
	if err := r.opts.Store.DeleteLink(r.opts.Connector, it.mapped.ExternalID); err != nil {
		return fmt.Errorf("drop link %s: %w", it.mapped.ExternalID, err)
	}
	r.log.WithField("external_id", it.mapped.ExternalID).Info("contact was deleted in the workspace; record deleted per onWorkspaceDelete")
	p.count(func(s *Summary) { s.Unlinked++ })
	return nil
}
