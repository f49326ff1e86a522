package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// refreshStale reads again (connector.Getter, one call per batch) the
// records about to be patched whose copy is older than the last
// write-back to them (Link.SourceWrittenAt): a copy from before syncd
// itself wrote the record.
//
// A change stream hands over every version of a record in order,
// syncd's own write-backs included. Two write-backs between passes (the
// app edited the contact twice) come as two versions in two batches; the
// first, older than what the link already agrees, was taken for a change
// of the record: the pass patched the app's older value over its newer
// one, then the newer back (issue 35: the logical stream's writes after
// the edits stopped, and a newer app edit overwritten meanwhile). Reading
// the record again gives the version the link knows, or newer. Guard's
// reread does the same for write-backs made while a run goes on; this
// covers those made before it began. Costs nothing for records that are
// unchanged or were not written back since.
func (ms *mapStep) refreshStale(ctx context.Context, items []*item) error {
	r := ms.r
	getter, ok := r.opts.Reader.(connector.Getter)
	if !ok {
		return nil
	}
	var ids []string
	stale := map[string]*item{}
	for _, it := range items {
		l := it.link
		if l == nil || l.WorkspaceHash == it.hash || it.rec.UpdatedAt.IsZero() || !it.rec.UpdatedAt.Before(l.SourceWrittenAt) {
			continue
		}
		ids = append(ids, it.rec.ID)
		stale[it.rec.ID] = it
	}
	if len(ids) == 0 {
		return nil
	}
	fresh, err := getter.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read again %d records older than their write-back: %w", len(ids), err)
	}
	for _, rec := range fresh {
		it := stale[rec.ID]
		if it == nil {
			continue
		}
		m, err := r.opts.Mapper.ToContact(rec)
		if err != nil || m.ExternalID != it.mapped.ExternalID {
			continue // the copy's own fate (a dead letter, a re-key) stands
		}
		f := ContactFields(m)
		it.rec, it.mapped, it.fields, it.hash = rec, m, f, f.Hash()
		if it.link.WorkspaceHash == it.hash {
			it.fingerprint = r.opts.Mapper.Fingerprint(rec, it.hash)
		}
		dl, ok := ms.letters.known[it.mapped.ExternalID]
		it.refused = ok && dl.Permanent && dl.Hash == it.hash
	}
	r.log.WithField(logfield.Records, len(ids)).Debug("records older than their last write-back read again")
	return nil
}
