package mysql

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.Counter = (*Source)(nil)

// Count runs one COUNT(*) with the filter of the read it stands for: the
// rows after the checkpoint's position, or every live row for a
// snapshot. The figure is exact at the time of the query.
func (s *Source) Count(ctx context.Context, checkpoint string, snapshot bool) (connector.Total, error) {
	if err := s.usable(ctx); err != nil {
		return connector.Total{}, err
	}
	q, args := s.q.countSnapshot, []any(nil)
	if !snapshot {
		pos, err := sqlkit.ParseCheckpoint(checkpoint)
		if err != nil {
			return connector.Total{}, fmt.Errorf("count %s: %w", s.tbl.name, err)
		}
		switch {
		case pos == nil:
			q = s.q.countFromStart
		case pos.ID == nil:
			q, args = s.q.countFrom, []any{pos.U}
		default:
			q, args = s.q.countAfter, []any{pos.U, pos.U, *pos.ID}
		}
	}
	var n int64
	if err := s.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return connector.Total{}, s.readError(ctx, err)
	}
	return connector.Total{N: n, Known: true}, nil
}
