package hubspot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

const (
	searchPath    = "/crm/v3/objects/contacts/search"
	listPath      = "/crm/v3/objects/contacts"
	listPageSize  = 100 // the list endpoint's largest page
	maxSearchBody = 3000
)

type searchFilter struct {
	PropertyName string `json:"propertyName"`
	Operator     string `json:"operator"`
	Value        string `json:"value"`
}

type searchSort struct {
	PropertyName string `json:"propertyName"`
	Direction    string `json:"direction"`
}

type searchBody struct {
	FilterGroups []struct {
		Filters []searchFilter `json:"filters"`
	} `json:"filterGroups"`
	Sorts      []searchSort `json:"sorts"`
	Properties []string     `json:"properties"`
	Limit      int          `json:"limit"`
}

type searchAnswer struct {
	Total   int      `json:"total"`
	Results []object `json:"results"`
	Paging  *paging  `json:"paging"`
}

// searchRequest is the query of one page of a window.
func (s *Source) searchRequest(cur searchCursor) searchBody {
	filters := []searchFilter{
		{PropertyName: "lastmodifieddate", Operator: "GTE", Value: strconv.FormatInt(cur.Since, 10)},
		{PropertyName: "lastmodifieddate", Operator: "LT", Value: strconv.FormatInt(cur.Until, 10)},
	}
	if cur.After != "" {
		filters = append(filters, searchFilter{PropertyName: "hs_object_id", Operator: "GT", Value: cur.After})
	}
	var b searchBody
	b.FilterGroups = append(b.FilterGroups, struct {
		Filters []searchFilter `json:"filters"`
	}{filters})
	b.Sorts = []searchSort{{PropertyName: "hs_object_id", Direction: "ASCENDING"}}
	b.Properties = append(slices.Clone(s.props), mergedProperty)
	b.Limit = s.pageSize
	return b
}

// searchBodySize is the length of the longest search request.
func (s *Source) searchBodySize() int {
	b, _ := json.Marshal(s.searchRequest(searchCursor{Since: 1 << 50, Until: 1 << 50, After: "9223372036854775807"}))
	return len(b)
}

// Changes reads the contacts changed since checkpoint (one window of
// lastmodifieddate, see the package comment), then the contacts webhooks
// named since the last read (readAnnounced), then the archivals not read
// before, as Deleted records.
func (s *Source) Changes(ctx context.Context, from string, fn connector.BatchFunc) error {
	cp, err := parseCheckpoint(from)
	if err != nil {
		return err
	}
	last := from
	emit := func(recs []connector.Record, next checkpoint) error {
		str := next.String()
		if len(recs) == 0 && str == last {
			return nil
		}
		if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: str}); err != nil {
			return fmt.Errorf("hubspot changes: %w", err)
		}
		last = str
		return nil
	}
	if cp.Search, err = s.readWindow(ctx, cp, emit); err != nil {
		return err
	}
	if err := s.readAnnounced(ctx, cp, emit); err != nil {
		return err
	}
	return s.scanArchived(ctx, cp, emit)
}

// readWindow reads the open window of cp (opening one at the clock if
// none is), page by page, and returns the cursor after it.
func (s *Source) readWindow(ctx context.Context, cp checkpoint, emit func([]connector.Record, checkpoint) error) (searchCursor, error) {
	cur := cp.Search
	fresh, counted := cur.Until == 0, false
	if fresh {
		var err error
		if cur, counted, err = s.openWindow(ctx, cur); err != nil {
			return cp.Search, err
		}
	}
	log := s.log.WithFields(logrus.Fields{logfield.Since: cur.Since, logfield.Until: cur.Until})
	pages, read := 0, 0
	for {
		var ans searchAnswer
		cl := call{method: http.MethodPost, path: searchPath, body: s.searchRequest(cur), search: true, idempotent: true}
		if _, err := s.c.do(ctx, cl, &ans); err != nil {
			return cur, fmt.Errorf("search contacts changed since %s: %w", time.UnixMilli(cur.Since).UTC().Format(time.RFC3339), err)
		}
		pages++
		recs := make([]connector.Record, 0, len(ans.Results))
		for _, o := range ans.Results {
			r := s.record(o)
			if !idAfter(r.ID, cur.After) {
				// A search must not answer ids at or before after (nor
				// ids that are not numbers): going on could loop.
				return cur, fmt.Errorf("search contacts: id %q is not a number after %q: refusing to loop", r.ID, cur.After)
			}
			// The contacts merged into this one come first, so that
			// their contacts move to it before it is looked up.
			recs = append(recs, mergedAway(o, r)...)
			recs = append(recs, r)
			read++
			cur.After = r.ID
			cur.Tail.add(r.UpdatedAt.UnixMilli(), r.ID)
		}
		next := cp
		done := len(ans.Results) == 0 || ans.Paging == nil || ans.Paging.Next == nil
		if done && fresh && read == 0 && !counted {
			// Nothing changed since the window's start: keep it, so that
			// a quiet source emits no batch (the next window, from the
			// same start, covers this one). After a count, the window
			// closes: what it counted need not be counted again.
			return cp.Search, nil
		}
		if done {
			cur = s.closeWindow(cur)
		}
		next.Search = cur
		if err := emit(recs, next); err != nil {
			return cur, err
		}
		if done {
			log.WithFields(logrus.Fields{logfield.Pages: pages, logfield.Contacts: read}).Debug("hubspot window read")
			return cur, nil
		}
	}
}

// openWindow opens a window at the clock from cursor cur. The window
// starts at cur.Since, or at the start of the look-back span before it
// (cur.Tail.From) unless a count shows that the search holds nothing in
// the span but the contacts already read there. The count is made only
// when those are at least a page: re-reading fewer costs one page at
// most, as much as the count. The window's own look-back span is set up
// to count what it reads. It reports whether it counted.
func (s *Source) openWindow(ctx context.Context, cur searchCursor) (searchCursor, bool, error) {
	cur.Until = max(s.now().UnixMilli(), cur.Since+1)
	cur.After = ""
	counted := false
	if cur.Tail != nil {
		seen, _, _ := cur.Tail.seen()
		skip := false
		if seen >= s.pageSize {
			var err error
			if skip, err = s.seenAll(ctx, cur.Tail, cur.Since); err != nil {
				return cur, false, err
			}
			counted = true
			s.log.WithFields(logrus.Fields{logfield.From: cur.Tail.From, logfield.Seen: seen, logfield.Reread: !skip}).Debug("hubspot look-back span counted")
		}
		if !skip {
			// The window re-reads the span: what it counts starts afresh.
			cur.Since, cur.Tail = cur.Tail.From, nil
		}
	}
	if s.lookback > 0 {
		cur.Tail = cur.Tail.moveTo(newTail(cur.Until, s.lookback.Milliseconds()))
	} else {
		cur.Tail = nil
	}
	return cur, counted, nil
}

// closeWindow returns the cursor after a window read to its end: the next
// window starts at its end, with its look-back span before it.
func (s *Source) closeWindow(cur searchCursor) searchCursor {
	if cur.Tail == nil || cur.Tail.From > cur.Until {
		// Nothing was counted (a window opened by an older version, or
		// no lookback): the next window re-reads the look-back span.
		return searchCursor{Since: max(0, cur.Until-s.lookback.Milliseconds())}
	}
	return searchCursor{Since: cur.Until, Tail: cur.Tail}
}

// idAfter reports whether id is a contact id (a number) after the id
// after ("" is before all).
func idAfter(id, after string) bool {
	a, ok := parseInt(id)
	if !ok {
		return false
	}
	if after == "" {
		return true
	}
	b, ok := parseInt(after)
	return ok && a > b
}

type listAnswer struct {
	Results []object `json:"results"`
	Paging  *paging  `json:"paging"`
}

// listPage reads one page of the list endpoint.
func (s *Source) listPage(ctx context.Context, archived bool, after string) (listAnswer, error) {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(min(s.pageSize, listPageSize)))
	q.Set("properties", strings.Join(s.props, ","))
	if archived {
		q.Set("archived", "true")
	}
	if after != "" {
		q.Set("after", after)
	}
	var ans listAnswer
	_, err := s.c.do(ctx, call{method: http.MethodGet, path: listPath, query: q, idempotent: true}, &ans)
	return ans, err
}

// scanArchived lists the archived contacts and emits, as Deleted records,
// the archivals the cursor has not seen.
func (s *Source) scanArchived(ctx context.Context, cp checkpoint, emit func([]connector.Record, checkpoint) error) error {
	old := cp.Archived
	start := s.now()
	if s.archivedInterval > 0 && old.Scanned != 0 && start.Sub(time.UnixMilli(old.Scanned)) < s.archivedInterval {
		return nil
	}
	lookback := s.lookback.Milliseconds()
	floor := int64(-1 << 62)
	if old.At != 0 {
		floor = old.At - lookback
	}
	newAt := old.At
	recent := map[string]int64{}
	after, total, emitted := "", 0, 0
	for {
		ans, err := s.listPage(ctx, true, after)
		if err != nil {
			return fmt.Errorf("list archived contacts: %w", err)
		}
		var recs []connector.Record
		for _, o := range ans.Results {
			at, ok := parseTime(o.ArchivedAt)
			if !ok {
				at, _ = parseTime(o.UpdatedAt)
			}
			ms := at.UnixMilli()
			total++
			newAt = max(newAt, ms)
			if ms >= newAt-lookback {
				recent[o.ID] = ms
			}
			if seen, ok := old.Recent[o.ID]; (ok && seen == ms) || ms < floor {
				continue
			}
			r := s.record(o)
			r.Deleted = true
			r.UpdatedAt = at
			recs = append(recs, r)
		}
		if len(recs) > 0 {
			if err := s.resolveMerged(ctx, recs); err != nil {
				return err
			}
		}
		emitted += len(recs)
		done := ans.Paging == nil || ans.Paging.Next == nil || ans.Paging.Next.After == ""
		next := cp
		if done {
			for id, ms := range recent {
				if ms < newAt-lookback {
					delete(recent, id)
				}
			}
			next.Archived = archivedCursor{At: newAt, Recent: recent, Scanned: s.now().UnixMilli()}
			if s.archivedInterval == 0 {
				next.Archived.Scanned = 0 // not needed: keeps the checkpoint stable
			}
		}
		if err := emit(recs, next); err != nil {
			return err
		}
		if done {
			s.log.WithFields(logrus.Fields{logfield.Archived: total, logfield.New: emitted}).Debug("hubspot archived contacts scanned")
			return nil
		}
		after = ans.Paging.Next.After
	}
}
