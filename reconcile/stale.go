package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
)

// refreshStale reads again (connector.Getter, one call per batch) the
// records about to be patched whose copy may be older than the record:
//
//   - a copy older than the last write-back to it (Link.SourceWrittenAt):
//     a copy from before syncd itself wrote the record. A change stream
//     hands over every version of a record in order, syncd's own
//     write-backs included. Two write-backs between passes (the app
//     edited the contact twice) come as two versions in two batches; the
//     first, older than what the link already agrees, was taken for a
//     change of the record: the pass patched the app's older value over
//     its newer one, then the newer back (issue 35: the logical stream's
//     writes after the edits stopped, and a newer app edit overwritten
//     meanwhile). Guard's reread does the same for write-backs made while
//     a run goes on; this covers those made before it began.
//   - any copy a change stream hands over (a replication slot, a binlog:
//     streamReader) that changes a linked contact. A stream behind the
//     table (at the workspace's 10 requests/s the soak's runs 30 to 40 s
//     behind) hands over row images seconds to minutes old: patched, an
//     old image overwrites the app edits made since, which then look
//     unchanged to the deletion of the row that follows in the stream,
//     and its contact is deleted with no journal entry (issue 35: edits
//     after a delete dropped, in logical mode only). The row as it is now
//     is patched instead. With onSourceDelete: delete, a row gone (or
//     soft-deleted) since is not patched at all: its deletion follows in
//     the stream and weighs the app's edits (editsAfterSourceDelete);
//     otherwise the contact, which stays, takes the row's last image.
//     With onSourceDelete: delete, a streamed create is read again too:
//     no contact is made from the image of a row deleted since (the
//     write-back may already have made the row again for its contact,
//     edited after the deletion, and dropped the old row's link: the old
//     image made a second contact for the person, issue 35's duplicates).
//     The read is of the table, one query per batch, never a workspace
//     call.
//
// Costs nothing for records that are unchanged or, outside a stream,
// were not written back since. It returns the items to go on with.
func (ms *mapStep) refreshStale(ctx context.Context, items []*item) ([]*item, error) {
	r := ms.r
	getter, ok := r.opts.Reader.(connector.Getter)
	if !ok {
		return items, nil
	}
	streaming := streamReader(r.opts.Reader)
	deletes := streaming && r.opts.OnSourceDelete == policy.DeleteRemove
	var ids []string
	stale := map[string]*item{}
	anyOlder := false
	for _, it := range items {
		l := it.link
		if l == nil && deletes {
			// A create: not made from the image of a row deleted since.
			ids = append(ids, it.rec.ID)
			stale[it.rec.ID] = it
			continue
		}
		if l == nil || l.WorkspaceHash == it.hash {
			continue
		}
		older := !it.rec.UpdatedAt.IsZero() && it.rec.UpdatedAt.Before(l.SourceWrittenAt)
		if !older && !streaming {
			continue
		}
		anyOlder = anyOlder || older
		ids = append(ids, it.rec.ID)
		stale[it.rec.ID] = it
	}
	if len(ids) == 0 {
		return items, nil
	}
	fresh, err := getter.Get(ctx, ids)
	if err != nil && !anyOlder && ctx.Err() == nil {
		// Only a stream's copies to check, and the table cannot be read
		// as the stream's images are (a mapped column dropped since: the
		// stream reports it): the images stand.
		r.log.WithError(err).WithField(logfield.Records, len(ids)).Warn("could not read streamed records again; their stream copies are applied")
		return items, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read again %d records older than their write-back: %w", len(ids), err)
	}
	gone := map[*item]bool{}
	if deletes {
		for _, it := range stale {
			gone[it] = true
		}
	}
	for _, rec := range fresh {
		it := stale[rec.ID]
		if it == nil {
			continue
		}
		if rec.Deleted && deletes {
			continue // soft-deleted since: left to its deletion
		}
		delete(gone, it)
		m, err := r.opts.Mapper.ToContact(rec)
		if err != nil || m.ExternalID != it.mapped.ExternalID {
			continue // the copy's own fate (a dead letter, a re-key) stands
		}
		f := ContactFields(m)
		rec = readAgain(it.rec, rec, streaming)
		it.rec, it.mapped, it.fields, it.hash = rec, m, f, f.Hash()
		if it.link != nil && it.link.WorkspaceHash == it.hash {
			it.fingerprint = r.opts.Mapper.Fingerprint(rec, it.hash)
		}
		dl, ok := ms.letters.known[it.mapped.ExternalID]
		it.refused = ok && dl.Permanent && dl.Hash == it.hash
	}
	r.log.WithField(logfield.Records, len(ids)).Debug("records older than their last write-back read again")
	if len(gone) == 0 {
		return items, nil
	}
	out := items[:0:0]
	for _, it := range items {
		if !gone[it] {
			out = append(out, it)
		}
	}
	r.log.WithField(logfield.Records, len(gone)).Debug("stream copies of records deleted since left to their deletion")
	return out, nil
}
