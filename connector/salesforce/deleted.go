package salesforce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// deleteLogDays is how far back getDeleted lists deletions: no more
// than 15 days before the day of the call.
const deleteLogDays = 15

type deletedAnswer struct {
	DeletedRecords []struct {
		ID          string `json:"id"`
		DeletedDate string `json:"deletedDate"`
	} `json:"deletedRecords"`
	EarliestDateAvailable string `json:"earliestDateAvailable"`
	LatestDateCovered     string `json:"latestDateCovered"`
}

// scanRange is the range getDeleted is asked for, as Salesforce reads
// it: the seconds of start and end are ignored, so both are whole
// minutes; ok is false when start is not more than one minute before
// end, which Salesforce refuses (INVALID_REPLICATION_DATE): the scan then
// waits for a later window, whose end is later.
func scanRange(from, until time.Time) (start, end time.Time, ok bool) {
	start, end = from.UTC().Truncate(time.Minute), until.UTC().Truncate(time.Minute)
	return start, end, end.Sub(start) > time.Minute
}

// purged returns, as Deleted records, the records getDeleted lists from
// from to until that queryAll no longer shows (purged from the Recycle
// Bin before a window read them), and where the next scan starts: the
// answer's latestDateCovered. The first window only sets the start. A
// range getDeleted would refuse is not asked for (the start stays for a
// later window); a refusal despite the rules (the delete log was purged
// past the start) is logged with the fix, a full resync, and the scan
// goes on from the end, so that it never asks for the same refused range
// again.
func (s *Source) purged(ctx context.Context, from, until time.Time, seen map[string]bool) ([]connector.Record, time.Time, error) {
	if from.IsZero() {
		return nil, until.UTC().Truncate(time.Minute), nil
	}
	y, m, d := s.now().UTC().Date()
	if oldest := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -deleteLogDays); from.Before(oldest) {
		s.log.WithFields(map[string]any{logfield.Since: from, logfield.From: oldest}).
			Error("deletions older than 15 days cannot be listed by Salesforce; run a full resync (syncd resync) to find the records deleted meanwhile")
		from = oldest
	}
	start, end, ok := scanRange(from, until)
	if !ok {
		return nil, from, nil
	}
	var ans deletedAnswer
	q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {end.Format(time.RFC3339)}}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/sobjects/" + s.object + "/deleted/", query: q}, &ans); err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == "INVALID_REPLICATION_DATE" {
			s.log.WithFields(map[string]any{logfield.Start: start, logfield.End: end, logfield.Reason: e.Message}).
				Error("Salesforce refused to list the deletions of this range (as it does when its delete log was purged past the start; its reason is logged): records deleted and purged from the Recycle Bin meanwhile cannot be listed; run a full resync (syncd resync) to find them")
			return nil, end, nil
		}
		return nil, from, fmt.Errorf("list deleted %s records: %w", s.object, err)
	}
	if earliest, err := parseTime(ans.EarliestDateAvailable); err == nil && earliest.After(start) {
		s.log.WithFields(map[string]any{logfield.Since: start, "earliestDateAvailable": earliest}).
			Error("Salesforce purged its delete log past the last deletion scan: deletions in between cannot be listed; run a full resync (syncd resync) to find them")
	}
	next := end
	if t, err := parseTime(ans.LatestDateCovered); err == nil && t.Before(end) && !t.Before(start) {
		next = t
	}
	var unseen []string
	when := map[string]time.Time{}
	for _, d := range ans.DeletedRecords {
		if !seen[d.ID] {
			unseen = append(unseen, d.ID)
			when[d.ID], _ = parseTime(d.DeletedDate)
		}
	}
	shown, err := s.existing(ctx, unseen)
	if err != nil {
		return nil, from, err
	}
	var out []connector.Record
	for _, id := range unseen {
		if !shown[id] {
			out = append(out, connector.Record{ID: id, Fields: map[string]any{"Id": id}, Deleted: true, UpdatedAt: when[id]})
		}
	}
	return out, next, nil
}

// existing returns which of ids queryAll still shows (live, or in the
// Recycle Bin): those a window reads with their IsDeleted and
// MasterRecordId.
func (s *Source) existing(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(ids) > 0 {
		n := min(len(ids), maxCollection)
		chunk := ids[:n]
		ids = ids[n:]
		soql := "SELECT Id FROM " + s.object + " WHERE Id IN (" + quoteAll(chunk) + ")"
		err := s.queryAll(ctx, "/queryAll", soql, func(recs []map[string]any) {
			for _, r := range recs {
				if id, _ := r["Id"].(string); id != "" {
					out[id] = true
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("look up deleted %s records: %w", s.object, err)
		}
	}
	return out, nil
}

func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = quote(id)
	}
	return strings.Join(q, ", ")
}

// queryAll runs soql through resource (/query or /queryAll), every page,
// and hands fn each page's records as plain maps.
func (s *Source) queryAll(ctx context.Context, resource, soql string, fn func([]map[string]any)) error {
	next := call{method: http.MethodGet, path: resource, query: url.Values{"q": {soql}}}
	for {
		var page struct {
			Done           bool             `json:"done"`
			NextRecordsURL string           `json:"nextRecordsUrl"`
			Records        []map[string]any `json:"records"`
		}
		if err := s.c.do(ctx, next, &page); err != nil {
			return err
		}
		fn(page.Records)
		if page.Done || page.NextRecordsURL == "" {
			return nil
		}
		next = call{method: http.MethodGet, path: page.NextRecordsURL, abs: true}
	}
}
