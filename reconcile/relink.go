package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
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
	if err := p.index.resetMatching(); err != nil {
		return err
	}
	if err := p.relink(ctx, true); err != nil {
		return err
	}
	p.indexed = true
	return p.index.claim(ctx)
}

// relink lists every workspace contact of the connector's source (pages
// of 50) and records a link for each one that carries an externalId, with
// the values it holds now. After it, an unlinked record has no contact,
// and a linked one is patched only where it differs. Memory stays bounded:
// links go to state a chunk at a time.
func (p *pass) relink(ctx context.Context, all bool) error {
	r := p.r
	l := &relinker{r: r, links: r.opts.Store.Links, index: &p.index, tally: &p.tally, pending: make([]state.Link, 0, relinkChunk)}
	l.reset()
	params := workspace.ListContactsParams{Sources: []string{r.opts.Source}, MaxResults: workspace.MaxPageSize}
	if all {
		params.Sources = nil
	}
	for c, err := range r.opts.Workspace.Contacts(ctx, params) {
		if err != nil {
			return fmt.Errorf("list contacts of source %s: %w", r.opts.Source, err)
		}
		ours := c.Source != nil && *c.Source == r.opts.Source && c.ExternalID != nil && connector.NormalizeID(*c.ExternalID) != ""
		switch {
		case ours:
			err = l.add(c)
		case all && r.adoptable(c):
			l.adoptable = append(l.adoptable, c)
			if len(l.adoptable) >= relinkChunk {
				err = l.flush()
			}
		}
		if err != nil {
			return err
		}
	}
	if err := l.flush(); err != nil {
		return err
	}
	p.listed = true
	if l.dups > 0 {
		r.log.WithField(logfield.Duplicates, l.dups).Warn("workspace holds several contacts with one externalId; the oldest of each is linked")
	}
	return nil
}

// relinker holds a listing's links and adoptable contacts until a chunk
// of them is written.
type relinker struct {
	r     *Reconciler
	links interface {
		Get(connector, externalID string) (l state.Link, ok bool, err error)
		PutAll(ls []state.Link) error
	}
	index *indexer
	tally *tally

	adoptable []workspace.Contact
	pending   []state.Link
	at        map[string]int               // externalId -> index in pending
	created   map[string]workspace.Contact // externalId -> the contact of pending[at]
	dups      int
}

func (l *relinker) reset() {
	l.pending, l.at, l.created = l.pending[:0], map[string]int{}, map[string]workspace.Contact{}
}

// add records the link a contact of the connector's source gives, unless
// an older contact carries its externalId too.
func (l *relinker) add(c workspace.Contact) error {
	ext := connector.NormalizeID(*c.ExternalID)
	link := l.linkFromContact(c)
	if i, ok := l.at[ext]; ok {
		l.dups++
		if !c.CreatedAt.Before(l.created[ext].CreatedAt) {
			l.warnDuplicate(ext, l.created[ext].ID, c.ID)
			return nil
		}
		l.warnDuplicate(ext, c.ID, l.created[ext].ID)
		l.pending[i], l.created[ext] = link, c
		return nil
	}
	// Links are empty when a listing starts (first sync, lost state,
	// resync): a link found now was written by this listing, under an
	// earlier chunk, so this contact is a duplicate.
	if old, ok, err := l.links.Get(l.r.opts.Connector, ext); err != nil {
		return fmt.Errorf("read link %s: %w", ext, err)
	} else if ok {
		l.dups++
		l.warnDuplicate(ext, old.ContactID, c.ID)
		return nil
	}
	l.at[ext] = len(l.pending)
	l.created[ext] = c
	l.pending = append(l.pending, link)
	l.tally.count(func(s *Summary) { s.Relinked++ })
	if len(l.pending) == relinkChunk {
		return l.flush()
	}
	return nil
}

// flush writes the links and indexes the adoptable contacts held.
func (l *relinker) flush() error {
	if len(l.pending) > 0 {
		if err := l.links.PutAll(l.pending); err != nil {
			return fmt.Errorf("save links: %w", err)
		}
		l.reset()
	}
	if err := l.index.indexContacts(l.adoptable); err != nil {
		return err
	}
	l.adoptable = l.adoptable[:0]
	return nil
}

func (l *relinker) warnDuplicate(ext, kept, other string) {
	l.r.log.WithField(logfield.ExternalID, ext).WithField(logfield.LinkedContact, kept).WithField(logfield.DuplicateContact, other).
		Warn("duplicate contact for one externalId; linking the oldest")
}

// linkFromContact is the link a listed contact gives: its workspace side
// as it is now.
func (l *relinker) linkFromContact(c workspace.Contact) state.Link {
	f := l.r.workspaceFields(c)
	return state.Link{
		Connector:        l.r.opts.Connector,
		ExternalID:       connector.NormalizeID(*c.ExternalID), // as the mapping keys records
		ContactID:        c.ID,
		Fields:           map[string]string(f),
		ItemIDs:          mapping.ItemIDs(c),
		WorkspaceHash:    f.Hash(),
		ContactUpdatedAt: c.UpdatedAt,
	}
}
