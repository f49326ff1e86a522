package pipedrive

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// readRecent reads the persons changed since the checkpoint's window
// end up to the clock, when the read is the first of this process
// (first) or a webhook was verified since the last read, and emits them
// with checkpoint cp unchanged. A first read that fails does not make
// the next one read up to the clock: the pass after a failure comes
// after a backoff (5 s and more) or, after a spent budget, the next day,
// and its window covers the default look-back before start-up.
//
// A read window ends lookback before the clock (changes.go), so without
// this the pass a webhook starts would not see the change it announced,
// and the first pass after start-up would leave the changes of the
// look-back before it to the next pass, an hour later on an hourly
// schedule. The checkpoint does not move: a person Pipedrive stamps in
// the past (clock skew, a slow commit) is still read by the next window,
// and the persons read here are read again there, which costs nothing
// more than the read. One list call per page; the look-back rarely holds
// more than one.
func (s *Source) readRecent(ctx context.Context, cp checkpoint, first bool, fn connector.BatchFunc) error {
	if !s.TakeDelivered() && !first {
		return nil
	}
	q := url.Values{
		"updated_since": {time.Unix(cp.Persons.Since, 0).UTC().Format(time.RFC3339)},
		"sort_by":       {"update_time"}, "sort_direction": {"asc"},
	}
	for {
		pg, err := s.listPersons(ctx, q)
		if err != nil {
			return fmt.Errorf("read persons changed since %d: %w", cp.Persons.Since, err)
		}
		recs, err := s.records(ctx, pg.Data)
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
				return fmt.Errorf("pipedrive batch: %w", err)
			}
		}
		next := pg.next()
		if next == "" {
			return nil
		}
		q.Set("cursor", next)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
