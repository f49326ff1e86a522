package postgres

import (
	"context"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.Counter = (*Source)(nil)

// Count runs one count(*) with the filter of the read it stands for: the
// rows after the checkpoint's position, or every live row for a
// snapshot. The figure is exact at the time of the query.
func (s *Source) Count(ctx context.Context, checkpoint string, snapshot bool) (connector.Total, error) {
	if err := s.usable(ctx); err != nil {
		return connector.Total{}, err
	}
	if _, ok, err := checkpointLSN(checkpoint); !snapshot && err == nil && ok {
		if s.logical != nil {
			// What the slot holds for the table is not known before it
			// is decoded.
			return connector.Total{}, nil
		}
		checkpoint = "" // back to poll: the next read reads every row
	}
	if s.logical != nil && !snapshot && checkpoint == "" {
		snapshot = true // the first pass reads the table in the slot's snapshot
	}
	return sqlkit.Count(ctx, pager{s: s}, s.tbl.name, checkpoint, snapshot)
}

// CountRows counts with the filter of the read from pos.
func (p pager) CountRows(ctx context.Context, pos *position, snapshot bool) (int64, error) {
	q, args := p.s.q.countSnapshot, []any(nil)
	switch {
	case snapshot:
	case pos == nil:
		q = p.s.q.countFromStart
	case pos.ID == nil:
		q, args = p.s.q.countFrom, []any{pos.U}
	default:
		q, args = p.s.q.countAfter, []any{pos.U, *pos.ID}
	}
	var n int64
	if err := p.s.pool.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0, p.s.readError(ctx, err)
	}
	return n, nil
}
