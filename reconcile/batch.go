package reconcile

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/idset"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// item is one mapped record on its way to the workspace.
type item struct {
	rec    connector.Record
	mapped mapping.Mapped
	fields mapping.Fields // mapped fields plus the sourceUrl pseudo-field
	hash   string
	link   *state.Link        // the record's link, when it has one
	found  *workspace.Contact // an unlinked contact that carries the externalId
	match  *workspace.Contact // a contact without link that shares a phone or e-mail
	// uncertain is set when a create's outcome is unknown: the contact
	// may exist, so the next attempt looks before it creates.
	uncertain bool
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

// batch maps, compares and writes one batch of records. It returns only
// when every record is written, unchanged or set aside as a dead letter;
// an error means the batch must not be checkpointed.
func (p *pass) batch(ctx context.Context, recs []connector.Record) error {
	if err := ctx.Err(); err != nil {
		return err // do not start a batch after a shutdown request
	}
	r := p.r
	recs, seen, err := p.skipUnchanged(recs)
	if err != nil {
		return err
	}
	items := make([]*item, 0, len(recs))
	index := map[string]int{} // externalId -> position in items (last wins)
	var deletes []connector.Record
	for _, rec := range recs {
		if rec.Deleted {
			deletes = append(deletes, rec)
			continue
		}
		m, err := r.opts.Mapper.ToContact(rec)
		if err != nil {
			ext, xerr := r.opts.Mapper.ExternalID(rec)
			if xerr != nil {
				p.incomplete = true
				ext = ""
			} else {
				seen = append(seen, ext)
			}
			p.setAside(ctx, opMap, keyOr(ext, "record:"+rec.ID), rec, "", false, err)
			continue
		}
		f := ContactFields(m)
		it := &item{rec: rec, mapped: m, fields: f, hash: f.Hash()}
		if i, dup := index[m.ExternalID]; dup {
			items[i] = it
			continue
		}
		index[m.ExternalID] = len(items)
		items = append(items, it)
		seen = append(seen, m.ExternalID)
	}

	if len(deletes) > 0 {
		// A merge moves a link before the survivor's record, perhaps in
		// this very batch, is looked up by it.
		mctx, cancel := p.writeContext(ctx)
		var err error
		deletes, err = p.relinkMerged(mctx, deletes)
		cancel()
		if err != nil {
			return err
		}
	}

	var work, unlinked []*item
	var fill []state.Link // unchanged links that lack the record's ID
	for _, it := range items {
		l, ok, err := r.opts.Store.Link(r.opts.Connector, it.mapped.ExternalID)
		if err != nil {
			return fmt.Errorf("read link %s: %w", it.mapped.ExternalID, err)
		}
		if ok {
			it.link = &l
			if l.WorkspaceHash == it.hash {
				fp := r.opts.Mapper.Fingerprint(it.rec, it.hash)
				if l.RecordID != it.rec.ID || l.Fingerprint != fp {
					// A link rebuilt from a listing knows no record ID;
					// write-back needs it to address the record. A
					// fingerprint that is missing or stale (the mapping
					// changed) is stored, so that the next pass skips
					// the record without mapping it.
					l.RecordID, l.Fingerprint = it.rec.ID, fp
					fill = append(fill, l)
				}
				p.count(func(s *Summary) { s.Unchanged++ })
				p.clearDeadLetter(it)
				continue
			}
		}
		if dl, ok := p.known[it.mapped.ExternalID]; ok && dl.Permanent && dl.Hash == it.hash {
			// Refused before with these very values: do not spend a call
			// to be refused again. A change of the record retries it.
			p.count(func(s *Summary) { s.Failed++ })
			continue
		}
		if it.link == nil {
			unlinked = append(unlinked, it)
		}
		work = append(work, it)
	}

	if len(fill) > 0 {
		if err := r.opts.Store.PutLinks(fill); err != nil {
			return fmt.Errorf("save record ids: %w", err)
		}
	}
	wctx, cancel := p.writeContext(ctx)
	defer cancel()
	if len(unlinked) > 0 && !p.listed {
		if err := p.lookUp(wctx, unlinked); err != nil {
			return err
		}
	}
	if len(unlinked) > 0 && p.indexed {
		kept := work[:0]
		for _, it := range work {
			if it.link == nil && it.found == nil {
				held, err := p.match(it)
				if err != nil {
					return err
				}
				if held {
					continue
				}
			}
			kept = append(kept, it)
		}
		work = kept
	}
	if err := p.writeAll(wctx, work); err != nil {
		return err
	}
	if p.full || !r.opts.Type.Incremental {
		if err := p.markSeen(seen); err != nil {
			return err
		}
	}
	if len(deletes) > 0 {
		return p.deleteRecords(wctx, deletes)
	}
	return nil
}

// markSeen records that this pass saw the records, for the sweep of the
// links whose record is gone (sweepUnseen). The set lives in memory, a
// few bytes a record, and is keyed by a hash seeded afresh each pass: a
// crash starts a new pass anyway, and a collision (a gone record's link
// taken for seen, odds of about one in 10^8 per link in a million-record
// pass) only delays its deletion to a later pass.
func (p *pass) markSeen(ids []string) error {
	if p.seen == nil {
		p.seen, p.seenSeed = idset.New(0), maphash.MakeSeed()
	}
	for _, id := range ids {
		if _, err := p.seen.Add(maphash.String(p.seenSeed, id)); err != nil {
			return fmt.Errorf("mark seen: %w", err)
		}
	}
	return nil
}

// wasSeen reports whether this pass saw the record of externalID.
func (p *pass) wasSeen(externalID []byte) (bool, error) {
	if p.seen == nil {
		return false, nil
	}
	return p.seen.Has(maphash.Bytes(p.seenSeed, externalID))
}

func keyOr(k, alt string) string {
	if k != "" {
		return k
	}
	return alt
}

// lookUp finds existing contacts for unlinked records by externalId (50
// values per call), so that a contact made before a crash or before the
// state was lost is adopted instead of duplicated.
func (p *pass) lookUp(ctx context.Context, items []*item) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.mapped.ExternalID
	}
	found, err := p.r.opts.Workspace.ContactsByExternalIDs(ctx, p.r.opts.Source, ids)
	if err != nil {
		return fmt.Errorf("look up %d externalIds: %w", len(ids), err)
	}
	byExt := oldestByExternalID(found)
	for _, it := range items {
		if c, ok := byExt[it.mapped.ExternalID]; ok {
			c := c
			it.found = &c
		}
	}
	return nil
}

// oldestByExternalID indexes contacts by externalId, keeping the oldest
// when several carry the same one (a duplicate made by someone else).
func oldestByExternalID(cs []workspace.Contact) map[string]workspace.Contact {
	out := make(map[string]workspace.Contact, len(cs))
	for _, c := range cs {
		if c.ExternalID == nil {
			continue
		}
		if have, ok := out[*c.ExternalID]; ok && !c.CreatedAt.Before(have.CreatedAt) {
			continue
		}
		out[*c.ExternalID] = c
	}
	return out
}

// writeAll writes items with the configured number of workers; they share
// the workspace client's rate limiter, so together they go at its pace.
func (p *pass) writeAll(ctx context.Context, items []*item) error {
	if len(items) == 0 {
		return nil
	}
	workers := min(p.r.opts.Workers, len(items))
	ch := make(chan *item)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				if err := p.write(ctx, it); err != nil {
					errs <- err
					return
				}
				p.wroteOne()
			}
		}()
	}
	var err error
feed:
	for _, it := range items {
		select {
		case ch <- it:
		case err = <-errs:
			break feed
		}
	}
	close(ch)
	wg.Wait()
	close(errs)
	if err != nil {
		return err
	}
	return <-errs // nil when the channel is empty
}
