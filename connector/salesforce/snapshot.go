package salesforce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/syncd-io/syncd/connector"
)

// Snapshot reads every live record, by Id, a query page per batch. A
// query locator that expires while a batch is recorded is replaced by a
// query from the last Id read.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.c.quota.allowProbe()
	from := func(last string) call {
		where := ""
		if last != "" {
			where = " WHERE Id > " + quote(last)
		}
		return call{method: http.MethodGet, path: "/query", query: url.Values{"q": {s.selectClause() + where + " ORDER BY Id ASC"}}}
	}
	next, last := from(""), ""
	for {
		var page queryAnswer
		err := s.c.do(ctx, next, &page)
		var e *Error
		if next.abs && errors.As(err, &e) && e.Code == "INVALID_QUERY_LOCATOR" {
			next = from(last)
			err = s.c.do(ctx, next, &page)
		}
		if err != nil {
			return fmt.Errorf("read every %s: %w", s.object, err)
		}
		recs, _, err := s.records(page.Records)
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			last = recs[len(recs)-1].ID
			if err := fn(ctx, connector.Batch{Records: recs}); err != nil {
				return fmt.Errorf("salesforce batch: %w", err)
			}
		}
		if page.Done || page.NextRecordsURL == "" {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		next = call{method: http.MethodGet, path: page.NextRecordsURL, abs: true}
	}
}

// validID reports whether id can be a Salesforce id: 15 or 18
// alphanumeric characters.
func validID(id string) bool {
	if len(id) != 15 && len(id) != 18 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}
