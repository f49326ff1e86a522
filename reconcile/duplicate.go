package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

// Two records of one connector that give one externalId (ids that differ
// only by the whitespace around them, " p100" and "p100", which
// connector.NormalizeID makes one) are both refused: writing either
// would give the other's contact its values, and a write-back would land
// in the wrong record. Each is set aside under one dead letter per
// externalId naming the records, and the contact linked to the id keeps
// its link and is not taken for deleted. The dead letter holds one of the
// records: while the source still has it, every other record of that
// externalId is refused too (the connector's Getter tells); once it is
// gone, the other goes through and the dead letter is cleared.

// errDuplicate names the records that share an externalId.
func errDuplicate(ext string, ids []string) error {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	return fmt.Errorf("records %s give one externalId %q (ids are compared without the whitespace around them): "+
		"each is refused until the others are renamed or removed at the source", strings.Join(quoted, " and "), ext)
}

// refuseDuplicates sets aside the items whose externalId another record
// of the source gives too: in this batch (twins), or, asked of the
// connector's Getter, the record the item's link names or one a
// duplicate dead letter names. It returns the other items.
func (ms *mapStep) refuseDuplicates(ctx context.Context, items []*item, twins map[string][]*item) ([]*item, error) {
	refused := map[*item]bool{}
	for ext, its := range twins {
		ids := make([]string, len(its))
		for i, it := range its {
			ids[i], refused[it] = it.rec.ID, true
		}
		for _, it := range its {
			ms.setAsideDuplicate(ctx, ext, it.rec, ids)
		}
	}
	getter, _ := ms.r.opts.Reader.(connector.Getter)
	if getter != nil {
		for _, it := range items {
			if refused[it] {
				continue
			}
			others, err := ms.otherRecords(ctx, getter, it)
			if err != nil {
				return nil, err
			}
			if len(others) > 0 {
				refused[it] = true
				ms.setAsideDuplicate(ctx, it.mapped.ExternalID, it.rec, append(others, it.rec.ID))
			}
		}
	}
	if len(refused) == 0 {
		return items, nil
	}
	return slices.DeleteFunc(items, func(it *item) bool { return refused[it] }), nil
}

// otherRecords returns the IDs of the other live records of the item's
// externalId: the one its link names (when its id is the item's but for
// the whitespace around it), and those a duplicate dead letter names. A dead letter none of whose other records lives is cleared.
func (ms *mapStep) otherRecords(ctx context.Context, getter connector.Getter, it *item) ([]string, error) {
	key := duplicateKey(it.mapped.ExternalID)
	var cands []string
	// The link's record is another only when the two ids differ by the
	// whitespace around them: any other change of id is a re-key (or a
	// merge), which the rest of the pass handles.
	if l := it.link; l != nil && l.RecordID != it.rec.ID && connector.NormalizeID(l.RecordID) == connector.NormalizeID(it.rec.ID) {
		cands = append(cands, l.RecordID)
	}
	known, marked := ms.letters.known[key]
	for _, id := range known.Twins {
		if id != it.rec.ID && !slices.Contains(cands, id) {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	recs, err := getter.Get(ctx, cands)
	if err != nil {
		return nil, fmt.Errorf("read records %v, which give externalId %s too: %w", cands, it.mapped.ExternalID, err)
	}
	var alive []string
	for _, r := range recs {
		if slices.Contains(cands, r.ID) && !r.Deleted {
			alive = append(alive, r.ID)
		}
	}
	if len(alive) == 0 && marked {
		if err := ms.letters.store.Clear(ms.r.opts.Connector, opMap, key); err != nil {
			return nil, fmt.Errorf("clear dead letter %s: %w", key, err)
		}
		delete(ms.letters.known, key)
	}
	slices.Sort(alive)
	return alive, nil
}

// setAsideDuplicate records rec under the dead letter of its externalId,
// naming every record that gives it (ids).
func (ms *mapStep) setAsideDuplicate(ctx context.Context, ext string, rec connector.Record, ids []string) {
	key := duplicateKey(ext)
	dp := deadPayload{Record: rec, Twins: ids}
	ms.letters.setAsidePayload(ctx, opMap, key, dp, errDuplicate(ext, ids))
	ms.letters.known[key] = dp
}
