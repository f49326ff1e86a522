package reconcile

import (
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

// skipper is the skip-unchanged step: it costs one read of the links a
// batch, and no mapping, for each record that did not change.
type skipper struct {
	r     *Reconciler
	links interface {
		Digests(connector string, externalIDs []string) ([]state.LinkDigest, error)
	}
	letters *letters
	tally   *tally
}

// skipUnchanged sets aside, before any mapping, the records whose raw
// fingerprint equals their link's: the record, under the same mapping,
// maps to the values the link records, so the pass has nothing to do for
// it but count it and mark it seen. It returns the records left to map and
// the externalIds of those it skipped. One read transaction per batch.
//
// A record is always mapped when its externalId appears twice in the
// batch (the last one wins, as in batch), when it has a dead letter (a
// mapping that now goes through clears it), or when its link has no
// fingerprint (written by an older syncd, a resync's listing or the
// reverse direction).
func (s *skipper) skipUnchanged(recs []connector.Record) (rest []connector.Record, skipped []string, err error) {
	r := s.r
	exts := make([]string, len(recs))
	count := make(map[string]int, len(recs))
	ask := make([]string, 0, len(recs))
	for i, rec := range recs {
		if rec.Deleted || rec.Invalid != nil {
			continue
		}
		ext, err := r.opts.Mapper.ExternalID(rec)
		if err != nil {
			continue
		}
		exts[i] = ext
		count[ext]++
		ask = append(ask, ext)
	}
	if len(ask) == 0 {
		return recs, nil, nil
	}
	digests, err := s.links.Digests(r.opts.Connector, ask)
	if err != nil {
		return nil, nil, fmt.Errorf("read links: %w", err)
	}
	rest = recs[:0:0]
	j := 0
	for i, rec := range recs {
		ext := exts[i]
		if ext == "" {
			rest = append(rest, rec)
			continue
		}
		d := digests[j]
		j++
		if d.Found && d.Fingerprint != ([8]byte{}) && d.RecordID == rec.ID && count[ext] == 1 &&
			!s.letters.has(ext, rec.ID) && r.opts.Mapper.Fingerprint(rec, d.WorkspaceHash) == d.Fingerprint {
			skipped = append(skipped, ext)
			continue
		}
		rest = append(rest, rec)
	}
	if len(skipped) > 0 {
		s.tally.count(func(s *Summary) { s.Unchanged += len(skipped) })
	}
	return rest, skipped, nil
}
