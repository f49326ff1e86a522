package reconcile

import (
	"context"
	"fmt"
	"sync"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

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
	// From the read on, before the merges' workspace calls: the contacts
	// this batch may make (making.go).
	defer p.r.makings.start(items)()
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
	if err := p.r.markCreating(items); err != nil { // creating.go
		return err
	}
	wctx, cancel := p.writeContext(ctx)
	defer cancel()
	if items, err = p.mapper.refreshStale(wctx, items); err != nil {
		return err
	}
	if items, err = p.mapper.refuseDuplicates(wctx, items, twins); err != nil {
		return err
	}
	if err := p.r.observe(items); err != nil { // observe.go
		return err
	}
	work, err := p.prepare(wctx, items)
	if err != nil {
		return err
	}
	if work, err = p.rekey.guardRekey(wctx, work, p.linked); err != nil {
		return err
	}
	if err := p.writer.peekContacts(wctx, work); err != nil {
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
		case actAwaitCreate:
			// Neither created nor linked here: the write-back links it
			// and asks for it to be read again (creating.go).
			p.r.log.WithFields(map[string]any{logfield.Record: it.rec.ID, logfield.Contact: it.creating.ContactID}).
				Debug("record being made for a contact of the app left to the write-back")
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
		if err := p.matcher.lookUp(wctx, unknown); err != nil {
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

// guardedBatch runs one batch of a run under the guard, after reading
// again the records written back since the run began.
func (p *pass) guardedBatch(ctx context.Context, recs []connector.Record) error {
	return p.guard.exclusive(func() error {
		recs, err := p.guard.reread(ctx, recs)
		if err != nil {
			return err
		}
		return p.batch(ctx, recs)
	})
}
