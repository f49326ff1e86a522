package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
)

// tail sums up the contacts read with a lastmodifieddate in the look-back
// span [From, Since) of a search cursor: per second (or Width) of lastmodifieddate,
// how many and their lowest and highest ids. The next window needs to
// re-read the span only for contacts the search index showed late, and
// when many were read there, one count answers whether there are any
// (see seenAll); otherwise it re-reads the span as it always did.
type tail struct {
	// From is the span's start, on a multiple of the width (epoch ms).
	From int64 `json:"from"`
	// Width is how long a second is, in ms: 0 for 1000; longer when the
	// look-back is (see spanWidth).
	Width int64 `json:"w,omitempty"`
	// Seconds are the contacts read, by second, ascending.
	Seconds []second `json:"seen,omitempty"`
}

// second is what was read with a lastmodifieddate in one second.
type second struct {
	At    int64 `json:"at"` // the second's start, epoch ms
	Count int   `json:"n"`
	MinID int64 `json:"lo"`
	MaxID int64 `json:"hi"`
}

// spanWidth is the width of a span's seconds for a look-back (ms): one
// second, or whole seconds making about 30 of the look-back when it is
// longer than 30 s, so that a checkpoint holds a few dozen at most.
func spanWidth(lookback int64) int64 {
	w := max(1000, lookback/30)
	return (w + 999) / 1000 * 1000
}

// newTail starts the look-back span of a window ending at until:
// lookback before it, on a multiple of the width.
func newTail(until, lookback int64) *tail {
	w := spanWidth(lookback)
	from := max(0, until-lookback)
	t := &tail{From: from - from%w}
	if w != 1000 {
		t.Width = w
	}
	return t
}

func (t *tail) width() int64 {
	if t.Width > 0 {
		return t.Width
	}
	return 1000
}

// add counts a contact read at ms with id, when ms is in the span.
func (t *tail) add(ms int64, id string) {
	n, ok := parseInt(id)
	if t == nil || !ok || ms < t.From {
		return
	}
	at := ms - ms%t.width()
	i := len(t.Seconds)
	for i > 0 && t.Seconds[i-1].At > at {
		i--
	}
	if i > 0 && t.Seconds[i-1].At == at {
		s := &t.Seconds[i-1]
		s.Count++
		s.MinID, s.MaxID = min(s.MinID, n), max(s.MaxID, n)
		return
	}
	t.Seconds = append(t.Seconds, second{})
	copy(t.Seconds[i+1:], t.Seconds[i:])
	t.Seconds[i] = second{At: at, Count: 1, MinID: n, MaxID: n}
}

// moveTo returns the span next (a newTail), with the seconds of t that
// start in it. Seconds of another width that straddle its start are
// dropped: what they counted is then short, and the count re-reads.
func (t *tail) moveTo(next *tail) *tail {
	if t == nil {
		return next
	}
	for _, s := range t.Seconds {
		if s.At >= next.From {
			next.Seconds = append(next.Seconds, s)
		}
	}
	return next
}

// seen returns how many contacts were read in the span and the range of
// their ids.
func (t *tail) seen() (count int, lo, hi int64) {
	for i, s := range t.Seconds {
		if i == 0 {
			lo, hi = s.MinID, s.MaxID
		}
		count += s.Count
		lo, hi = min(lo, s.MinID), max(hi, s.MaxID)
	}
	return count, lo, hi
}

// seenAll reports whether the search now shows no contact in the span
// [t.From, until) but those read there, with one search call that counts
// (limit 1) the contacts that are either
//
//   - in the range of the read contacts' ids, with a lastmodifieddate at
//     or after From: the contacts read (those changed since included, as
//     they never move back) and any other there, late or changed since;
//   - outside that range, with a lastmodifieddate in the span: late ones.
//
// Every contact read is counted once unless it was archived or merged
// away since; so when the count equals the number read, no contact of the
// span was left out, unless as many vanished as were late (a coincidence
// of an archival or merge and a late index in the same few seconds, which
// the next change of the late contact repairs). Any other count re-reads
// the span. A contact read twice (changed again within the span) counts
// twice in the tail and once in the search: the span is re-read, the safe
// way.
func (s *Source) seenAll(ctx context.Context, t *tail, until int64) (bool, error) {
	count, lo, hi := t.seen()
	from := strconv.FormatInt(t.From, 10)
	to := strconv.FormatInt(until, 10)
	group := func(fs ...searchFilter) struct {
		Filters []searchFilter `json:"filters"`
	} {
		return struct {
			Filters []searchFilter `json:"filters"`
		}{fs}
	}
	var b searchBody
	b.FilterGroups = append(b.FilterGroups,
		group(searchFilter{"lastmodifieddate", "GTE", from},
			searchFilter{"hs_object_id", "GTE", strconv.FormatInt(lo, 10)},
			searchFilter{"hs_object_id", "LTE", strconv.FormatInt(hi, 10)}),
		group(searchFilter{"lastmodifieddate", "GTE", from}, searchFilter{"lastmodifieddate", "LT", to},
			searchFilter{"hs_object_id", "LT", strconv.FormatInt(lo, 10)}),
		group(searchFilter{"lastmodifieddate", "GTE", from}, searchFilter{"lastmodifieddate", "LT", to},
			searchFilter{"hs_object_id", "GT", strconv.FormatInt(hi, 10)}))
	b.Sorts = []searchSort{{PropertyName: "hs_object_id", Direction: "ASCENDING"}}
	b.Properties = []string{"hs_object_id"}
	b.Limit = 1
	var ans searchAnswer
	cl := call{method: http.MethodPost, path: searchPath, body: b, search: true, idempotent: true}
	if _, err := s.c.do(ctx, cl, &ans); err != nil {
		return false, fmt.Errorf("count contacts of the look-back span: %w", err)
	}
	return ans.Total == count, nil
}
