package reconcile

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/idset"
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

// batch maps, compares and writes one batch of records. It returns only
// when every record is written, unchanged or set aside as a dead letter;
// an error means the batch must not be checkpointed.
func (p *pass) batch(ctx context.Context, recs []connector.Record) error {
	if err := ctx.Err(); err != nil {
		return err // do not start a batch after a shutdown request
	}
	recs, seen, err := p.skip.skipUnchanged(recs)
	if err != nil {
		return err
	}
	items, deletes, seen, twins := p.mapper.mapRecords(ctx, recs, seen)
	if len(deletes) > 0 {
		// A merge moves a link before the survivor's record, perhaps in
		// this very batch, is looked up by it.
		mctx, cancel := p.writeContext(ctx)
		err := p.merger.findSurvivors(mctx, deletes)
		if err == nil {
			deletes, err = p.merger.relinkMerged(mctx, deletes)
		}
		cancel()
		if err != nil {
			return err
		}
	}
	if err := p.loadLinks(items); err != nil {
		return err
	}
	wctx, cancel := p.writeContext(ctx)
	defer cancel()
	if err := p.mapper.refreshStale(wctx, items); err != nil {
		return err
	}
	if items, err = p.mapper.refuseDuplicates(wctx, items, twins); err != nil {
		return err
	}
	work, err := p.prepare(wctx, items)
	if err != nil {
		return err
	}
	if work, err = p.rekey.guardRekey(wctx, work, p.linked); err != nil {
		return err
	}
	if err := p.writeAll(wctx, work); err != nil {
		return err
	}
	if p.full || !p.r.opts.Type.Incremental {
		if err := p.seen.mark(seen); err != nil {
			return err
		}
	}
	if len(deletes) > 0 {
		return p.deleter.deleteRecords(wctx, deletes, p.linked)
	}
	return nil
}

// mapStep is the map step: it maps a batch's records to items, reads
// again those older than their write-back, and refuses the records that
// give one externalId. incomplete is set when a record could not even
// yield an externalId, so that a full pass cannot tell deletions from
// failures.
type mapStep struct {
	r          *Reconciler
	letters    *letters
	warnings   *warnings
	incomplete bool
}

// mapRecords maps a batch's records to items (the last copy of a record
// wins), sets aside those that do not map, and returns the deletions, the
// externalIds seen (added to seen), and the items of the externalIds that
// several records give (twins: refused, see duplicate.go).
func (ms *mapStep) mapRecords(ctx context.Context, recs []connector.Record, seen []string) (items []*item, deletes []connector.Record, _ []string, twins map[string][]*item) {
	r := ms.r
	items = make([]*item, 0, len(recs))
	index := map[string]int{} // externalId -> position in items
	for _, rec := range recs {
		if rec.Deleted {
			deletes = append(deletes, rec)
			continue
		}
		if rec.Invalid != nil {
			seen = ms.setAsideInvalid(ctx, rec, seen)
			continue
		}
		m, err := r.opts.Mapper.ToContact(rec)
		if err != nil {
			ext, xerr := r.opts.Mapper.ExternalID(rec)
			if xerr != nil {
				ms.incomplete = true
				ext = ""
			} else {
				seen = append(seen, ext)
			}
			ms.letters.setAside(ctx, opMap, keyOr(ext, "record:"+rec.ID), rec, "", false, err)
			continue
		}
		ms.warnings.note(rec, m)
		f := ContactFields(m)
		it := &item{rec: rec, mapped: m, fields: f, hash: f.Hash()}
		if i, dup := index[m.ExternalID]; dup {
			if prev := items[i]; prev.rec.ID != rec.ID || twins[m.ExternalID] != nil {
				if twins == nil {
					twins = map[string][]*item{}
				}
				if twins[m.ExternalID] == nil {
					twins[m.ExternalID] = []*item{prev}
				}
				if !slices.ContainsFunc(twins[m.ExternalID], func(t *item) bool { return t.rec.ID == rec.ID }) {
					twins[m.ExternalID] = append(twins[m.ExternalID], it)
				}
				continue
			}
			items[i] = it
			continue
		}
		index[m.ExternalID] = len(items)
		items = append(items, it)
		seen = append(seen, m.ExternalID)
	}
	return items, deletes, seen, twins
}

// loadLinks reads the items' links and their dead letters, and the
// fingerprints of the records whose link holds their mapped values.
func (p *pass) loadLinks(items []*item) error {
	r := p.r
	for _, it := range items {
		l, ok, err := r.opts.Store.Links.Get(r.opts.Connector, it.mapped.ExternalID)
		if err != nil {
			return fmt.Errorf("read link %s: %w", it.mapped.ExternalID, err)
		}
		if ok {
			it.link = &l
			keepUnread(r.opts.Mapper, it)
			if l.WorkspaceHash == it.hash {
				it.fingerprint = fingerprint(r.opts.Mapper, it.rec, it.hash)
			}
		}
		dl, ok := p.letters.known[it.mapped.ExternalID]
		it.refused = ok && dl.Permanent && dl.Hash == it.hash
	}
	return nil
}

// prepare carries out, for a batch's items, the actions that come before
// the writes: what needs no call, the look-ups by externalId (one call
// per 50), the match index and holds. It returns the items to write.
func (p *pass) prepare(wctx context.Context, items []*item) ([]*item, error) {
	ru := p.rules()
	var work, unknown []*item
	var fill []state.Link // unchanged links that lack the record's id or fingerprint
	for _, it := range items {
		switch decide(it, ru) {
		case actUnchanged:
			p.count(func(s *Summary) { s.Unchanged++ })
			p.letters.clearDeadLetter(it)
		case actFillRecordID:
			l := *it.link
			l.RecordID, l.Fingerprint = it.rec.ID, it.fingerprint
			fill = append(fill, l)
			p.count(func(s *Summary) { s.Unchanged++ })
			p.letters.clearDeadLetter(it)
		case actSkipRefused:
			// Refused before with these very values: do not spend a call
			// to be refused again. A change of the record retries it.
			p.count(func(s *Summary) { s.Failed++ })
		case actLookUp:
			unknown = append(unknown, it)
			work = append(work, it)
		default:
			work = append(work, it)
		}
	}
	if len(fill) > 0 {
		if err := p.r.opts.Store.Links.PutAll(fill); err != nil {
			return nil, fmt.Errorf("save record ids: %w", err)
		}
	}
	if len(unknown) > 0 {
		if err := p.lookUp(wctx, unknown); err != nil {
			return nil, err
		}
	}
	return p.matchAll(work, ru)
}

// matchAll consults the match index for the items that need it and holds
// those that match ambiguously; it returns the items left to write.
func (p *pass) matchAll(items []*item, ru rules) ([]*item, error) {
	kept := items[:0]
	for _, it := range items {
		a := decide(it, ru)
		if a == actMatch {
			if err := p.matcher.match(it); err != nil {
				return nil, err
			}
			a = decide(it, ru)
		}
		if a == actHold {
			if err := p.matcher.hold(it); err != nil {
				return nil, err
			}
			continue
		}
		if !a.writes() {
			return nil, fmt.Errorf("record %s: %s before writing", it.mapped.ExternalID, a)
		}
		kept = append(kept, it)
	}
	return kept, nil
}

// seenSet is the externalIds a pass saw, for the sweep of the links whose
// record is gone (sweepUnseen).
type seenSet struct {
	set  *idset.Set
	seed maphash.Seed
}

// mark records that this pass saw the records, for the sweep of the
// links whose record is gone (sweepUnseen). The set lives in memory, a
// few bytes a record, and is keyed by a hash seeded afresh each pass: a
// crash starts a new pass anyway, and a collision (a gone record's link
// taken for seen, odds of about one in 10^8 per link in a million-record
// pass) only delays its deletion to a later pass.
func (s *seenSet) mark(ids []string) error {
	if s.set == nil {
		s.set, s.seed = idset.New(0), maphash.MakeSeed()
	}
	for _, id := range ids {
		if _, err := s.set.Add(maphash.String(s.seed, id)); err != nil {
			return fmt.Errorf("mark seen: %w", err)
		}
	}
	return nil
}

// has reports whether this pass saw the record of externalID.
func (s *seenSet) has(externalID []byte) (bool, error) {
	if s.set == nil {
		return false, nil
	}
	return s.set.Has(maphash.Bytes(s.seed, externalID))
}

// close frees the set.
func (s *seenSet) close() error {
	if s.set == nil {
		return nil
	}
	return s.set.Close()
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
		it.lookedUp = true
		if c, ok := byExt[it.mapped.ExternalID]; ok {
			p.r.setFound(it, &c)
		}
	}
	return nil
}

// setFound records the unlinked contact that carries the item's
// externalId, and what it holds of the mapped targets.
func (r *Reconciler) setFound(it *item, c *workspace.Contact) {
	it.found = c
	it.foundHave = r.workspaceFields(*c)
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
				if err := p.writer.write(ctx, it); err != nil {
					errs <- err
					return
				}
				p.report.wroteOne()
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
