package activity

import (
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/state"
)

// record is one record an activity goes on, with the number that led to
// it.
type record struct {
	id, number string
}

// recordIndex finds a connector's records by phone number: the links
// whose mapped phoneNumbers.* values hold it (the links record what
// syncd last agreed on with both sides, E.164). It is built from the
// links on first use and again when a number is not found, at most every
// rebuildEvery, so a contact linked since is found without a read of the
// links per event.
type recordIndex struct {
	st  Links
	now func() time.Time

	mu    sync.Mutex
	byNum map[string]map[string][]string // connector -> number -> record ids
	built map[string]time.Time
}

// rebuildEvery bounds how often a miss reads a connector's links again.
const rebuildEvery = 2 * time.Second

func newRecordIndex(st Links, now func() time.Time) *recordIndex {
	return &recordIndex{st: st, now: now, byNum: map[string]map[string][]string{}, built: map[string]time.Time{}}
}

// lookup returns connector's records of numbers, each once.
func (x *recordIndex) lookup(connector string, numbers []string) ([]record, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.byNum[connector]; !ok {
		if err := x.buildLocked(connector); err != nil {
			return nil, err
		}
	}
	out := x.findLocked(connector, numbers)
	if len(out) < len(numbers) && x.now().Sub(x.built[connector]) >= rebuildEvery {
		if err := x.buildLocked(connector); err != nil {
			return nil, err
		}
		out = x.findLocked(connector, numbers)
	}
	return out, nil
}

func (x *recordIndex) findLocked(connector string, numbers []string) []record {
	var out []record
	seen := map[string]bool{}
	for _, n := range numbers {
		for _, id := range x.byNum[connector][n] {
			if !seen[id] {
				seen[id] = true
				out = append(out, record{id: id, number: n})
			}
		}
	}
	return out
}

func (x *recordIndex) buildLocked(connector string) error {
	idx := map[string][]string{}
	err := x.st.ForEach(connector, func(l state.Link) error {
		for k, v := range l.Fields {
			if strings.HasPrefix(k, "phoneNumbers.") && v != "" && l.RecordID != "" {
				idx[v] = append(idx[v], l.RecordID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.byNum[connector], x.built[connector] = idx, x.now()
	return nil
}
