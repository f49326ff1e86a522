package pipedrive

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// checkpoint is the position of Changes: the open window of the persons
// listing and the recents scan's cursor. It is stored as compact JSON.
type checkpoint struct {
	Persons windowCursor  `json:"persons"`
	Recents recentsCursor `json:"recents"`
	Known   idScanCursor  `json:"known"`
}

// windowCursor is a position in the windows of update_time (Unix
// seconds).
type windowCursor struct {
	Since  int64  `json:"since"`
	Until  int64  `json:"until,omitempty"`  // 0: no window open
	Cursor string `json:"cursor,omitempty"` // next page of the open window
}

// recentsCursor is what the scans of the recents feed have seen.
type recentsCursor struct {
	// At is the newest update time read from the feed (Unix seconds).
	At int64 `json:"at,omitempty"`
	// Emitted are the deletions emitted at At or the second before, as
	// "<id>" or "<id>>into", so that the overlap of the next scan does
	// not emit them again.
	Emitted map[string]int64 `json:"emitted,omitempty"`
	// Scanned is when the last scan ended (Unix ms, syncd's clock).
	Scanned int64 `json:"scanned,omitempty"`
}

func parseCheckpoint(s string) (checkpoint, error) {
	cp, err := connector.DecodeCheckpoint[checkpoint](TypeName, s)
	if err != nil {
		return cp, err
	}
	w := cp.Persons
	if w.Since < 0 || w.Until < 0 || (w.Until != 0 && w.Until <= w.Since) || (w.Until == 0 && w.Cursor != "") {
		return cp, fmt.Errorf("parse pipedrive checkpoint: bad window [%d, %d)", w.Since, w.Until)
	}
	return cp, nil
}

func (cp checkpoint) String() string { return connector.EncodeCheckpoint(cp) }

// maxCustomKeys is the most custom field keys a list may name.
const maxCustomKeys = 15

// customKeys are the keys of the custom fields the records carry; nil
// when they carry every field.
func (s *Source) customKeys() []string {
	var keys []string
	for _, f := range s.want {
		if k, ok := strings.CutPrefix(f, customPrefix); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// page is one answer of GET /api/v2/persons.
type page struct {
	Data           []person `json:"data"`
	AdditionalData struct {
		NextCursor *string `json:"next_cursor"`
	} `json:"additional_data"`
}

func (p page) next() string {
	if p.AdditionalData.NextCursor == nil {
		return ""
	}
	return *p.AdditionalData.NextCursor
}

func (s *Source) listPersons(ctx context.Context, q url.Values) (page, error) {
	var pg page
	q.Set("limit", strconv.Itoa(s.pageSize))
	if keys := s.customKeys(); len(keys) > 0 && len(keys) <= maxCustomKeys {
		// Only the mapped custom fields: a smaller, faster answer.
		q.Set("custom_fields", strings.Join(keys, ","))
	}
	err := s.c.do(ctx, call{method: http.MethodGet, path: "/api/v2/persons", query: q, route: "GET /api/v2/persons", idempotent: true}, &pg)
	return pg, err
}

// Changes reads the deletions and merges of the recents feed, then (when
// due) the id scan's deletions, then the persons changed after the
// checkpoint, and on the first read and after a webhook up to the clock
// (readRecent). See the package comment.
func (s *Source) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cp, err := parseCheckpoint(checkpoint)
	if err != nil {
		return err
	}
	s.survivors.reset() // the last read's persons are stale now
	first := !s.readUp.Swap(true)
	// Deletions first: a merged person's link moves to the survivor
	// before the survivor's new values are read.
	if cp, err = s.scanRecents(ctx, cp, fn); err != nil {
		return err
	}
	if cp, err = s.scanIDs(ctx, cp, fn); err != nil {
		return err
	}
	if cp, err = s.readWindow(ctx, cp, fn); err != nil {
		return err
	}
	return s.readRecent(ctx, cp, first, fn)
}

// readWindow reads the open window (or opens one) to its end.
func (s *Source) readWindow(ctx context.Context, cp checkpoint, fn connector.BatchFunc) (checkpoint, error) {
	w := cp.Persons
	if w.Until == 0 {
		until := s.now().Add(-s.lookback).Truncate(time.Second).Unix()
		if until <= w.Since {
			return cp, nil
		}
		w.Until = until
	}
	first := w.Cursor == ""
	for {
		q := url.Values{
			"updated_since": {time.Unix(w.Since, 0).UTC().Format(time.RFC3339)},
			"updated_until": {time.Unix(w.Until, 0).UTC().Format(time.RFC3339)},
			"sort_by":       {"update_time"}, "sort_direction": {"asc"},
		}
		if w.Cursor != "" {
			q.Set("cursor", w.Cursor)
		}
		pg, err := s.listPersons(ctx, q)
		if err != nil {
			return cp, fmt.Errorf("read persons changed in [%d, %d): %w", w.Since, w.Until, err)
		}
		next := pg.next()
		if first && next == "" && len(pg.Data) == 0 {
			return cp, nil // nothing new: keep the checkpoint, emit nothing
		}
		first = false
		recs, err := s.records(ctx, pg.Data)
		if err != nil {
			return cp, err
		}
		if next != "" {
			w.Cursor = next
		} else {
			w = windowCursor{Since: w.Until}
		}
		cp.Persons = w
		if err := s.addKnown(&cp, pg.Data); err != nil {
			return cp, err
		}
		if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
			return cp, fmt.Errorf("pipedrive batch: %w", err)
		}
		if next == "" {
			return cp, nil
		}
		if err := ctx.Err(); err != nil {
			return cp, err
		}
	}
}
