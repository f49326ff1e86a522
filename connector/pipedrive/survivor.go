package pipedrive

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/syncd-io/syncd/connector"
)

var _ connector.SurvivorFinder = (*Source)(nil)

// survivors indexes live persons by their e-mail addresses and phone
// numbers, so that a person merged away with no trace (no merge_what_id
// in the recents feed) is matched to the person it was merged into: a
// merge gives the kept person the e-mail addresses and phone numbers it
// lacked. It holds the active persons of the recents pages that had
// deletions (the kept person changed at the merge, so it is in the feed)
// and every person of an id scan that found deletions; it lives until the
// next read and costs no call.
type survivors struct {
	mu  sync.Mutex
	idx map[string][]int64
}

// reset forgets the index: the last read's persons are stale.
func (v *survivors) reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.idx = nil
}

// merge adds an index of persons to the kept one.
func (v *survivors) merge(idx map[string][]int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.idx == nil {
		v.idx = map[string][]int64{}
	}
	for k, ids := range idx {
		for _, id := range ids {
			if !slices.Contains(v.idx[k], id) {
				v.idx[k] = append(v.idx[k], id)
			}
		}
	}
}

// add indexes persons.
func (v *survivors) add(ps []person) {
	idx := map[string][]int64{}
	indexPersons(idx, ps)
	v.merge(idx)
}

// indexPersons adds the e-mail addresses and phone numbers of ps to idx.
func indexPersons(idx map[string][]int64, ps []person) {
	for _, p := range ps {
		if p.IsDeleted {
			continue
		}
		for _, it := range p.Emails {
			if k := emailKey(it.Value); k != "" {
				idx[k] = append(idx[k], p.ID)
			}
		}
		for _, it := range p.Phones {
			if k := phoneKey(it.Value); k != "" {
				idx[k] = append(idx[k], p.ID)
			}
		}
	}
}

func emailKey(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	if !strings.Contains(v, "@") {
		return ""
	}
	return "e:" + v
}

// phoneKey is a number's last ten digits (seven at least): the same
// number written with or without its country code, or in E.164 as the
// workspace has it, has one key.
func phoneKey(v string) string {
	var d []rune
	for _, r := range v {
		if unicode.IsDigit(r) {
			d = append(d, r)
		}
	}
	if len(d) < 7 {
		return ""
	}
	return "p:" + string(d[max(0, len(d)-10):])
}

// Survivor returns the one live person this read indexed (see
// survivors), other than deletedID, holding one of the e-mail addresses
// or phone numbers; "" when none or several do, or when this read found
// no deletion.
func (s *Source) Survivor(_ context.Context, deletedID string, emails, phones []string) (string, error) {
	s.survivors.mu.Lock()
	defer s.survivors.mu.Unlock()
	if s.survivors.idx == nil {
		return "", nil
	}
	self, _ := strconv.ParseInt(deletedID, 10, 64)
	found := map[int64]bool{}
	look := func(k string) {
		for _, id := range s.survivors.idx[k] {
			if id != self {
				found[id] = true
			}
		}
	}
	for _, e := range emails {
		if k := emailKey(e); k != "" {
			look(k)
		}
	}
	for _, p := range phones {
		if k := phoneKey(p); k != "" {
			look(k)
		}
	}
	if len(found) != 1 {
		return "", nil
	}
	for id := range found {
		return strconv.FormatInt(id, 10), nil
	}
	return "", nil
}
