package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
)

var (
	_ connector.Source      = (*Source)(nil)
	_ connector.Writer      = (*Source)(nil)
	_ connector.FieldLister = (*Source)(nil)
)

// errClosed is returned by the calls of a closed source.
var errClosed = errors.New("postgres source is closed")

// Source reads and writes one table or view.
type Source struct {
	pool      *pgxpool.Pool
	tbl       *table
	q         queries
	batchSize int
	red       *redactor
	log       *logrus.Entry
	closed    atomic.Bool
}

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

// Snapshot reads every live row in id order.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	var after *string
	for {
		q, args := s.q.snapshotFirst, []any{s.batchSize}
		if after != nil {
			q, args = s.q.snapshotAfter, []any{s.batchSize, *after}
		}
		recs, last, err := s.page(ctx, q, args...)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return nil
		}
		after = last.ID
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(ctx, connector.Batch{Records: recs}); err != nil {
			return fmt.Errorf("postgres batch of %s: %w", s.tbl.name, err)
		}
		if len(recs) < s.batchSize {
			return nil
		}
	}
}

// Fields returns the columns of the table (or of the columns setting).
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return append([]string(nil), s.tbl.listed...), nil
}

// Close closes the connections.
func (s *Source) Close() error {
	if !s.closed.Swap(true) {
		s.pool.Close()
	}
	return nil
}

func (s *Source) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return errClosed
	}
	return nil
}

// readError is the error of a failed read: the context's when it is
// done, otherwise the statement's, without secrets.
func (s *Source) readError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("read %s: %w", s.tbl.name, s.red.redact(err))
}

// page runs one read statement and returns its records and the position
// of its last row.
func (s *Source) page(ctx context.Context, q string, args ...any) ([]connector.Record, position, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, position{}, s.readError(ctx, err)
	}
	defer rows.Close()
	var (
		id, cursor pgtype.Text
		deleted    bool
		updatedAt  *time.Time
		values     = make([]any, len(s.tbl.fetch))
		dest       = make([]any, 0, fixedColumns+len(s.tbl.fetch))
		recs       []connector.Record
		last       position
	)
	dest = append(dest, &id, &cursor, &deleted, &updatedAt)
	for i, c := range s.tbl.fetch {
		values[i] = newScanValue(c.kind)
		dest = append(dest, values[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, position{}, s.readError(ctx, err)
		}
		rec := connector.Record{
			ID:      id.String,
			Fields:  make(map[string]any, len(s.tbl.fetch)),
			Deleted: deleted,
		}
		if updatedAt != nil {
			rec.UpdatedAt = *updatedAt
		}
		for i, c := range s.tbl.fetch {
			rec.Fields[c.name] = goValue(values[i])
		}
		recs = append(recs, rec)
		rowID := id.String
		last = position{U: cursor.String, ID: &rowID}
	}
	if err := rows.Err(); err != nil {
		return nil, position{}, s.readError(ctx, err)
	}
	return recs, last, nil
}

// newScanValue returns a scan destination for a column of kind k.
func newScanValue(k kind) any {
	switch k {
	case kindBool:
		return new(pgtype.Bool)
	case kindInt:
		return new(pgtype.Int8)
	case kindFloat:
		return new(pgtype.Float8)
	case kindTimestamptz:
		return new(pgtype.Timestamptz)
	case kindTimestamp:
		return new(pgtype.Timestamp)
	case kindDate:
		return new(pgtype.Date)
	case kindArray:
		return new([]pgtype.Text)
	}
	return new(pgtype.Text)
}

// goValue turns a scanned value into one of the record value types:
// string, int64, float64, bool, time.Time, []string or nil. Infinite
// times become the strings "infinity" and "-infinity"; NULL elements of
// arrays become "".
func goValue(v any) any {
	switch v := v.(type) {
	case *pgtype.Bool:
		if v.Valid {
			return v.Bool
		}
	case *pgtype.Int8:
		if v.Valid {
			return v.Int64
		}
	case *pgtype.Float8:
		if v.Valid {
			return v.Float64
		}
	case *pgtype.Timestamptz:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *pgtype.Timestamp:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *pgtype.Date:
		if v.Valid {
			return timeValue(v.Time, v.InfinityModifier)
		}
	case *[]pgtype.Text:
		if *v == nil {
			return nil
		}
		out := make([]string, len(*v))
		for i, e := range *v {
			out[i] = e.String
		}
		return out
	case *pgtype.Text:
		if v.Valid {
			return v.String
		}
	}
	return nil
}

func timeValue(t time.Time, inf pgtype.InfinityModifier) any {
	switch inf {
	case pgtype.Infinity:
		return "infinity"
	case pgtype.NegativeInfinity:
		return "-infinity"
	}
	return t
}
