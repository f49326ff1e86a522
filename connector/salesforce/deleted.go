package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// maxReplicationAge is how far back getDeleted may start.
const maxReplicationAge = 30 * 24 * time.Hour

type deletedAnswer struct {
	DeletedRecords []struct {
		ID          string `json:"id"`
		DeletedDate string `json:"deletedDate"`
	} `json:"deletedRecords"`
	EarliestDateAvailable string `json:"earliestDateAvailable"`
	LatestDateCovered     string `json:"latestDateCovered"`
}

// purged returns, as Deleted records, the records getDeleted lists from
// from to until that queryAll no longer shows (purged from the Recycle
// Bin before a window read them), and where the next scan starts. The
// first window only sets the start; getDeleted wants more than a minute
// between start and end, so a shorter range waits for the next window.
func (s *Source) purged(ctx context.Context, from, until time.Time, seen map[string]bool) ([]connector.Record, time.Time, error) {
	end := until.UTC()
	if from.IsZero() {
		return nil, end, nil
	}
	start := from.UTC()
	if oldest := s.now().UTC().Add(-maxReplicationAge).Add(time.Minute); start.Before(oldest) {
		s.log.WithFields(map[string]any{"since": start, "from": oldest}).
			Error("deletions older than 30 days cannot be listed by Salesforce; run a full resync (syncd resync) to find the records deleted meanwhile")
		start = oldest
	}
	if end.Sub(start) <= time.Minute {
		return nil, from, nil
	}
	var ans deletedAnswer
	q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {end.Format(time.RFC3339)}}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/sobjects/" + s.object + "/deleted/", query: q}, &ans); err != nil {
		return nil, from, fmt.Errorf("list deleted %s records: %w", s.object, err)
	}
	if earliest, err := parseTime(ans.EarliestDateAvailable); err == nil && earliest.After(start) {
		s.log.WithFields(map[string]any{"since": start, "earliestDateAvailable": earliest}).
			Error("Salesforce purged its delete log past the last deletion scan: deletions in between cannot be listed; run a full resync (syncd resync) to find them")
	}
	next := end
	if t, err := parseTime(ans.LatestDateCovered); err == nil && t.Before(end) {
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
