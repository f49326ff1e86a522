package reconcile

import (
	"fmt"
	"hash/maphash"

	"github.com/syncd-io/syncd/internal/idset"
)

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
