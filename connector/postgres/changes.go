package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/connector"
)

// position is a place in the (cursor, id) order. With ID nil it stands
// before every row whose cursor is U or later; otherwise just after the
// row (U, ID). Both are in their columns' text form.
type position struct {
	U  string  `json:"u"`
	ID *string `json:"id,omitempty"`
}

func (p position) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}

func parseCheckpoint(checkpoint string) (*position, error) {
	if checkpoint == "" {
		return nil, nil
	}
	var p position
	if err := json.Unmarshal([]byte(checkpoint), &p); err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
	}
	return &p, nil
}

// Changes reads the rows after checkpoint in (cursor, id) order. With a
// lookback, a batch's checkpoint is never later than the server's clock
// at the start of the read minus lookback.
func (s *Source) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	pos, err := parseCheckpoint(checkpoint)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.tbl.name, err)
	}
	start := time.Now()
	var safe string
	if s.tbl.lookback > 0 {
		interval := fmt.Sprintf("%d microseconds", s.tbl.lookback.Microseconds())
		if err := s.pool.QueryRow(ctx, s.q.safeBound, interval).Scan(&safe); err != nil {
			return s.readError(ctx, err)
		}
	}
	rows, batches := 0, 0
	for {
		var q string
		var args []any
		switch {
		case pos == nil:
			q, args = s.q.changesFromStart, []any{s.batchSize}
		case pos.ID == nil:
			q, args = s.q.changesFrom, []any{s.batchSize, pos.U}
		default:
			q, args = s.q.changesAfter, []any{s.batchSize, pos.U, *pos.ID}
		}
		recs, last, err := s.page(ctx, q, args...)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			break
		}
		pos = &last
		cp := last
		if safe != "" {
			var recent bool
			if err := s.pool.QueryRow(ctx, s.q.after, last.U, safe).Scan(&recent); err != nil {
				return s.readError(ctx, err)
			}
			if recent {
				cp = position{U: safe}
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
			return fmt.Errorf("postgres batch of %s: %w", s.tbl.name, err)
		}
		rows += len(recs)
		batches++
		if len(recs) < s.batchSize {
			break
		}
	}
	s.log.WithFields(logrus.Fields{"rows": rows, "batches": batches, "duration": time.Since(start)}).Debug("postgres changes read")
	return nil
}
