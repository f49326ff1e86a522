package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// relinkChunk is how many links one state transaction writes.
const relinkChunk = 500

// listWorkspace rebuilds what the pass knows of the workspace from one
// listing: the links of the connector's contacts and, when the connector
// matches by phone or e-mail, the index of every contact it may adopt
// (then the listing covers the whole workspace, and the source is scanned
// once for records that claim the same contact).
func (p *pass) listWorkspace(ctx context.Context) error {
	if !p.r.matching() {
		return p.relink(ctx, false)
	}
	if err := p.resetMatching(); err != nil {
		return err
	}
	if err := p.relink(ctx, true); err != nil {
		return err
	}
	p.indexed = true
	return p.claim(ctx)
}

// relink lists every workspace contact of the connector's source (pages
// of 50) and records a link for each one that carries an externalId, with
// the values it holds now. After it, an unlinked record has no contact,
// and a linked one is patched only where it differs. Memory stays bounded:
// links go to state a chunk at a time.
func (p *pass) relink(ctx context.Context, all bool) error {
	r := p.r
	var adoptable []workspace.Contact
	pending := make([]state.Link, 0, relinkChunk)
	at := map[string]int{} // externalId -> index in pending
	created := map[string]workspace.Contact{}
	flush := func() error {
		if len(pending) > 0 {
			if err := r.opts.Store.PutLinks(pending); err != nil {
				return fmt.Errorf("save links: %w", err)
			}
			pending, at, created = pending[:0], map[string]int{}, map[string]workspace.Contact{}
		}
		if err := p.indexContacts(adoptable); err != nil {
			return err
		}
		adoptable = adoptable[:0]
		return nil
	}
	dups := 0
	params := workspace.ListContactsParams{Sources: []string{r.opts.Source}, MaxResults: workspace.MaxPageSize}
	if all {
		params.Sources = nil
	}
	for c, err := range r.opts.Workspace.Contacts(ctx, params) {
		if err != nil {
			return fmt.Errorf("list contacts of source %s: %w", r.opts.Source, err)
		}
		ours := c.Source != nil && *c.Source == r.opts.Source && c.ExternalID != nil && *c.ExternalID != ""
		if !ours {
			if all && r.adoptable(c) {
				adoptable = append(adoptable, c)
				if len(adoptable) >= relinkChunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			continue
		}
		ext := *c.ExternalID
		l := p.linkFromContact(c)
		if i, ok := at[ext]; ok {
			dups++
			if !c.CreatedAt.Before(created[ext].CreatedAt) {
				p.warnDuplicate(ext, created[ext].ID, c.ID)
				continue
			}
			p.warnDuplicate(ext, c.ID, created[ext].ID)
			pending[i], created[ext] = l, c
			continue
		}
		// Links are empty when a listing starts (first sync, lost state,
		// resync): a link found now was written by this listing, under an
		// earlier chunk, so this contact is a duplicate.
		if old, ok, err := r.opts.Store.Link(r.opts.Connector, ext); err != nil {
			return fmt.Errorf("read link %s: %w", ext, err)
		} else if ok {
			dups++
			p.warnDuplicate(ext, old.ContactID, c.ID)
			continue
		}
		at[ext] = len(pending)
		created[ext] = c
		pending = append(pending, l)
		p.count(func(s *Summary) { s.Relinked++ })
		if len(pending) == relinkChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	p.listed = true
	if dups > 0 {
		r.log.WithField("duplicates", dups).Warn("workspace holds several contacts with one externalId; the oldest of each is linked")
	}
	return nil
}

func (p *pass) warnDuplicate(ext, kept, other string) {
	p.r.log.WithField("external_id", ext).WithField("linked_contact", kept).WithField("duplicate_contact", other).
		Warn("duplicate contact for one externalId; linking the oldest")
}

// linkFromContact is the link a listed contact gives: its workspace side
// as it is now.
func (p *pass) linkFromContact(c workspace.Contact) state.Link {
	f := p.workspaceFields(c)
	return state.Link{
		Connector:        p.r.opts.Connector,
		ExternalID:       *c.ExternalID,
		ContactID:        c.ID,
		Fields:           map[string]string(f),
		ItemIDs:          mapping.ItemIDs(c),
		WorkspaceHash:    f.Hash(),
		ContactUpdatedAt: c.UpdatedAt,
	}
}
