package pipedrive

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// recentsPage is one answer of GET /v1/recents?items=person.
type recentsPage struct {
	Data []struct {
		Item string `json:"item"`
		ID   int64  `json:"id"`
		Data *struct {
			ID          int64  `json:"id"`
			ActiveFlag  *bool  `json:"active_flag"`
			UpdateTime  string `json:"update_time"`
			MergeWhatID *int64 `json:"merge_what_id"`
			Emails      []item `json:"email"`
			Phones      []item `json:"phone"`
		} `json:"data"`
	} `json:"data"`
	AdditionalData struct {
		LastTimestampOnPage string `json:"last_timestamp_on_page"`
		Pagination          struct {
			MoreItems bool `json:"more_items_in_collection"`
		} `json:"pagination"`
	} `json:"additional_data"`
}

// scanRecents emits the deletions and merges the recents feed lists since
// the cursor, one batch per page that has any; the other pages' progress
// rides on the next batch (the window's). It returns the checkpoint with
// the cursor moved.
func (s *Source) scanRecents(ctx context.Context, cp checkpoint, fn connector.BatchFunc) (checkpoint, error) {
	rc := &cp.Recents
	now := s.now()
	if rc.At == 0 {
		// Nothing was read yet: no person deleted before now is linked.
		rc.At = now.Add(-s.lookback).Truncate(time.Second).Unix()
		return cp, nil
	}
	if s.deletionsInterval > 0 && rc.Scanned != 0 && now.UnixMilli()-rc.Scanned < s.deletionsInterval.Milliseconds() {
		return cp, nil
	}
	since, start := rc.At-1, 0
	for {
		pg, err := s.recentsPage(ctx, since, start)
		if err != nil {
			return cp, err
		}
		recs := s.deletions(pg, rc)
		if last, ok := parseTime(pg.AdditionalData.LastTimestampOnPage); ok && last.Unix() > rc.At {
			rc.At = last.Unix()
		}
		more := pg.AdditionalData.Pagination.MoreItems && len(pg.Data) > 0
		if !more {
			rc.Scanned = s.now().UnixMilli()
			pruneEmitted(rc)
		}
		if len(recs) > 0 {
			s.survivors.add(pg.live()) // a merge's kept person changed too: it is in the feed
			if err := s.dropKnown(&cp, recs); err != nil {
				return cp, err
			}
			if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
				return cp, fmt.Errorf("pipedrive batch: %w", err)
			}
		}
		if !more {
			return cp, nil
		}
		if err := ctx.Err(); err != nil {
			return cp, err
		}
		// Start over from the page's last second when that moves the
		// scan on (an offset into a feed that changes meanwhile can skip
		// items); page on by offset inside one crowded second.
		if rc.At-1 > since {
			since, start = rc.At-1, 0
		} else {
			start += len(pg.Data)
		}
	}
}

// live are the page's active persons, with their e-mail addresses and
// phone numbers (the feed's person items carry them), for Survivor.
func (pg recentsPage) live() []person {
	var out []person
	for _, e := range pg.Data {
		if e.Item != "person" || e.Data == nil || (e.Data.ActiveFlag != nil && !*e.Data.ActiveFlag) {
			continue
		}
		out = append(out, person{ID: e.Data.ID, Emails: e.Data.Emails, Phones: e.Data.Phones})
	}
	return out
}

func (s *Source) recentsPage(ctx context.Context, since int64, start int) (recentsPage, error) {
	var pg recentsPage
	q := url.Values{
		"since_timestamp": {time.Unix(since, 0).UTC().Format(time.DateTime)},
		"items":           {"person"}, "start": {strconv.Itoa(start)}, "limit": {strconv.Itoa(s.pageSize)},
	}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/v1/recents", query: q, route: "GET /v1/recents", idempotent: true}, &pg); err != nil {
		return pg, fmt.Errorf("read deleted persons (recents since %d): %w", since, err)
	}
	return pg, nil
}

// deletions are the page's deleted persons not emitted before, as
// Deleted records; a person merged into another carries MergedInto.
func (s *Source) deletions(pg recentsPage, rc *recentsCursor) []connector.Record {
	into := map[int64]int64{}
	for _, e := range pg.Data {
		if e.Data != nil && e.Data.MergeWhatID != nil && *e.Data.MergeWhatID != 0 {
			into[*e.Data.MergeWhatID] = e.Data.ID
		}
	}
	var out []connector.Record
	emit := func(id, merged int64, at time.Time) {
		key := strconv.FormatInt(id, 10)
		if merged != 0 {
			key += ">" + strconv.FormatInt(merged, 10)
		}
		if _, done := rc.Emitted[key]; done {
			return
		}
		if rc.Emitted == nil {
			rc.Emitted = map[string]int64{}
		}
		rc.Emitted[key] = at.Unix()
		r := connector.Record{ID: strconv.FormatInt(id, 10), Deleted: true, UpdatedAt: at, Fields: map[string]any{fieldID: strconv.FormatInt(id, 10)}}
		if merged != 0 {
			r.MergedInto = strconv.FormatInt(merged, 10)
		}
		out = append(out, r)
	}
	for _, e := range pg.Data {
		if e.Item != "person" || e.Data == nil {
			continue
		}
		at, _ := parseTime(e.Data.UpdateTime)
		if e.Data.MergeWhatID != nil && *e.Data.MergeWhatID != 0 {
			emit(*e.Data.MergeWhatID, e.Data.ID, at)
		}
		if e.Data.ActiveFlag != nil && !*e.Data.ActiveFlag && into[e.Data.ID] == 0 {
			emit(e.Data.ID, 0, at)
		}
	}
	return out
}

// pruneEmitted forgets the deletions older than the scan's overlap.
func pruneEmitted(rc *recentsCursor) {
	for k, at := range rc.Emitted {
		if at < rc.At-1 {
			delete(rc.Emitted, k)
		}
	}
}
