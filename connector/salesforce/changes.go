package salesforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// soqlTime is SOQL's dateTime literal; soqlTimeMillis the same with
// milliseconds.
const (
	soqlTime       = "2006-01-02T15:04:05Z"
	soqlTimeMillis = "2006-01-02T15:04:05.000Z"
)

// checkpoint is the position of an incremental read: the window being
// read ([Since, Until), Until zero between windows), the key of the last
// record recorded in it (TS, ID), and where the next getDeleted starts.
type checkpoint struct {
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	TS    time.Time `json:"ts,omitzero"`
	ID    string    `json:"id,omitempty"`
	Del   time.Time `json:"del,omitzero"`
}

func parseCheckpoint(s string) (checkpoint, error) {
	return connector.DecodeCheckpoint[checkpoint](TypeName, s)
}

func (c checkpoint) String() string { return connector.EncodeCheckpoint(c) }

// queryAnswer is a page of query results.
type queryAnswer struct {
	TotalSize      int               `json:"totalSize"`
	Done           bool              `json:"done"`
	NextRecordsURL string            `json:"nextRecordsUrl"`
	Records        []json.RawMessage `json:"records"`
}

// Changes reads the records changed since checkpoint; see the package
// comment.
func (s *Source) Changes(ctx context.Context, cp string, fn connector.BatchFunc) error {
	c, err := parseCheckpoint(cp)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.c.quota.allowProbe()
	resumed := !c.Until.IsZero()
	if !resumed {
		c.Until = s.now().UTC().Add(-s.settle).Truncate(time.Second)
		if !c.Since.IsZero() && !c.Since.Before(c.Until) {
			return nil
		}
	}
	emitted := false
	seen := map[string]bool{} // records of this window, for the deletion scan
	from := key{ts: c.TS, id: c.ID}
	next := call{method: http.MethodGet, path: "/queryAll", query: url.Values{"q": {s.windowQuery(c)}}}
	for {
		var page queryAnswer
		err := s.c.do(ctx, next, &page)
		var e *Error
		if next.abs && errors.As(err, &e) && e.Code == "INVALID_QUERY_LOCATOR" {
			// The cursor expired (15 minutes unused while a slow batch
			// was recorded): a new query goes on from the last key.
			s.log.Info("salesforce query locator expired; querying again from the last record read")
			from = key{ts: c.TS, id: c.ID}
			next = call{method: http.MethodGet, path: "/queryAll", query: url.Values{"q": {s.windowQuery(c)}}}
			err = s.c.do(ctx, next, &page)
		}
		if !next.abs && s.refusedMillis(err, c) {
			next = call{method: http.MethodGet, path: "/queryAll", query: url.Values{"q": {s.windowQuery(c)}}}
			err = s.c.do(ctx, next, &page)
		}
		if err != nil {
			return fmt.Errorf("read %s changes: %w", s.object, err)
		}
		recs, keys, err := s.records(page.Records)
		if err != nil {
			return err
		}
		recs, keys = after(from, recs, keys)
		for _, r := range recs {
			seen[r.ID] = true
		}
		if page.Done {
			return s.closeWindow(ctx, c, recs, seen, emitted || resumed, fn)
		}
		if page.NextRecordsURL == "" {
			return fmt.Errorf("read %s changes: an answer not done has no nextRecordsUrl", s.object)
		}
		// The key of the page's last record still inside the window: a
		// record changed while the window is read comes back with its
		// new SystemModstamp, outside the window and out of order.
		for i := len(keys) - 1; i >= 0; i-- {
			if keys[i].ts.Before(c.Until) {
				c.TS, c.ID = keys[i].ts, keys[i].id
				break
			}
		}
		if len(recs) > 0 {
			if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: c.String()}); err != nil {
				return fmt.Errorf("salesforce batch: %w", err)
			}
			emitted = true
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		next = call{method: http.MethodGet, path: page.NextRecordsURL, abs: true}
	}
}

// closeWindow records the window's last page with the deletion scan's
// records and the next window's checkpoint. A scan that fails does not
// hold the window back: its records are recorded and the window closes
// with the scan's start unchanged, so that the next window, ending
// later, lists those deletions. open says the window already recorded a
// batch (or was resumed): it is closed even with nothing more to record.
func (s *Source) closeWindow(ctx context.Context, c checkpoint, recs []connector.Record, seen map[string]bool, open bool, fn connector.BatchFunc) error {
	end := checkpoint{Since: c.Until, Del: c.Del}
	gone, del, scanErr := s.purged(ctx, c.Del, c.Until, seen)
	if scanErr == nil {
		end.Del = del
		recs = append(recs, gone...)
	}
	if len(recs) > 0 || open || !end.Del.Equal(c.Del) {
		if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: end.String()}); err != nil {
			return fmt.Errorf("salesforce batch: %w", err)
		}
	}
	if scanErr == nil {
		return nil
	}
	if errors.Is(scanErr, connector.ErrBudgetSpent) || ctx.Err() != nil {
		return scanErr // the pass stops; the window's records are recorded
	}
	s.log.WithError(scanErr).WithField(logfield.Since, c.Del).
		Warn("salesforce deletion scan failed; the window's records are recorded and the next window lists these deletions")
	return nil
}

// after drops the records at or before the key from (with their keys):
// a query resumed from a key with milliseconds sent as its second (see
// keyLiteral) sends again the records of that second already read.
func after(from key, recs []connector.Record, keys []key) ([]connector.Record, []key) {
	if from.ts.IsZero() || from.ts.Equal(from.ts.Truncate(time.Second)) {
		return recs, keys // the query itself starts right after the key
	}
	n := 0
	for i, k := range keys {
		if k.after(from) {
			recs[n], keys[n] = recs[i], k
			n++
		}
	}
	return recs[:n], keys[:n]
}

// windowQuery is the SOQL of a window from the key (TS, ID) on.
func (s *Source) windowQuery(c checkpoint) string {
	return s.selectClause() + " WHERE " + strings.Join(s.windowConds(c), " AND ") + " ORDER BY SystemModstamp ASC, Id ASC"
}

// windowConds are the conditions of a window's records from the key on.
func (s *Source) windowConds(c checkpoint) []string {
	conds := []string{"SystemModstamp < " + c.Until.UTC().Format(soqlTime)}
	if !c.Since.IsZero() {
		conds = append(conds, "SystemModstamp >= "+c.Since.UTC().Format(soqlTime))
	}
	if !c.TS.IsZero() {
		ts := s.keyLiteral(c.TS)
		conds = append(conds, fmt.Sprintf("(SystemModstamp > %s OR (SystemModstamp = %s AND Id > %s))", ts, ts, quote(c.ID)))
	}
	return conds
}

// keyLiteral is a key's SystemModstamp as a SOQL dateTime: with its
// milliseconds (the REST API's dateTime format) unless the org refused
// them once (SOQL documents whole seconds only); then its second, from
// which the query sends again the records of that second already read,
// and after drops them.
func (s *Source) keyLiteral(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond() == 0 || s.secondLiterals.Load() {
		return t.Format(soqlTime)
	}
	return t.Format(soqlTimeMillis)
}

// refusedMillis reports whether err is the org refusing the query of a
// key with milliseconds: from then on keys are sent as whole seconds, and
// the caller sends its query again.
func (s *Source) refusedMillis(err error, c checkpoint) bool {
	var e *Error
	if c.TS.Nanosecond() == 0 || s.secondLiterals.Load() || !errors.As(err, &e) || e.Code != "MALFORMED_QUERY" {
		return false
	}
	s.secondLiterals.Store(true)
	s.log.WithField(logfield.Reason, e.Message).Info("salesforce refused a dateTime with milliseconds in SOQL; sending whole seconds from now on")
	return true
}

func (s *Source) selectClause() string {
	return "SELECT " + strings.Join(append(append([]string{}, systemFields...), s.fields...), ", ") + " FROM " + s.object
}

// quote is a SOQL string literal.
func quote(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\r", `\r`, "\t", `\t`, `"`, `\"`)
	return "'" + r.Replace(v) + "'"
}

// key is a record's position in the window order.
type key struct {
	ts time.Time
	id string
}

// after reports whether k comes after o in the window order
// (SystemModstamp, then Id as SOQL compares ids: by their 15-character,
// case-sensitive form).
func (k key) after(o key) bool {
	if !k.ts.Equal(o.ts) {
		return k.ts.After(o.ts)
	}
	return id15(k.id) > id15(o.id)
}

func id15(id string) string {
	if len(id) == 18 {
		return id[:15]
	}
	return id
}

// records converts a page; keys are the records' (SystemModstamp, Id).
func (s *Source) records(raw []json.RawMessage) ([]connector.Record, []key, error) {
	recs := make([]connector.Record, 0, len(raw))
	keys := make([]key, 0, len(raw))
	for _, r := range raw {
		rec, k, err := s.record(r)
		if err != nil {
			return nil, nil, err
		}
		recs = append(recs, rec)
		keys = append(keys, k)
	}
	return recs, keys, nil
}

// record converts one query result. Field names match case-insensitively
// (API names are), and the record keeps them as the mapping spells them.
func (s *Source) record(raw json.RawMessage) (connector.Record, key, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return connector.Record{}, key{}, fmt.Errorf("decode a %s record: %w", s.object, err)
	}
	lower := make(map[string]any, len(m))
	for k, v := range m {
		lower[strings.ToLower(k)] = v
	}
	id, _ := lower["id"].(string)
	if id == "" {
		return connector.Record{}, key{}, fmt.Errorf("a %s record without Id", s.object)
	}
	ts, err := parseTime(lower["systemmodstamp"])
	if err != nil {
		return connector.Record{}, key{}, fmt.Errorf("%s %s: SystemModstamp: %w", s.object, id, err)
	}
	rec := connector.Record{ID: id, UpdatedAt: ts, Fields: make(map[string]any, len(s.fields)+1)}
	rec.Fields["Id"] = id
	for _, f := range s.fields {
		rec.Fields[f] = value(lower[strings.ToLower(f)])
	}
	if del, _ := lower["isdeleted"].(bool); del {
		rec.Deleted = true
		rec.MergedInto, _ = lower["masterrecordid"].(string)
	}
	return rec, key{ts: ts, id: id}, nil
}

// value keeps text as text; numbers and booleans become text too, as
// the mapping reads them; nested values (compound fields) are refused by
// the mapping as they come.
func value(v any) any {
	switch t := v.(type) {
	case nil, string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	return fmt.Sprint(v)
}

// parseTime reads Salesforce's dateTime values
// (2026-01-05T09:00:00.000+0000).
func parseTime(v any) (time.Time, error) {
	s, _ := v.(string)
	for _, layout := range []string{"2006-01-02T15:04:05.000-0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a dateTime", s)
}
