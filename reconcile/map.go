package reconcile

import (
	"context"
	"slices"

	"github.com/syncd-io/syncd/connector"
)

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

// setAsideInvalid sets aside a record the source could not read whole
// (a malformed line): nothing is written for it, and its contact, when
// its externalId could be read, counts as seen (not deleted). Without an
// externalId, the pass infers no deletion. It returns seen, extended.
func (ms *mapStep) setAsideInvalid(ctx context.Context, rec connector.Record, seen []string) []string {
	key := rec.ID
	if ext, err := ms.r.opts.Mapper.ExternalID(rec); err == nil {
		key = ext
		seen = append(seen, ext)
	} else {
		ms.incomplete = true
	}
	ms.letters.setAsideRead(ctx, key, rec)
	return seen
}
