package mysql

import (
	"context"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

var _ connector.Counter = (*Source)(nil)

// Count runs one COUNT(*) with the filter of the read it stands for (see
// sqlkit.Count).
func (s *Source) Count(ctx context.Context, checkpoint string, snapshot bool) (connector.Total, error) {
	if err := s.usable(ctx); err != nil {
		return connector.Total{}, err
	}
	if !snapshot && isBinlogCheckpoint(checkpoint) {
		if s.binlog != nil {
			// What the binlog holds for the table is not known before
			// it is decoded.
			return connector.Total{}, nil
		}
		checkpoint = "" // back to poll: the next read reads every row
	}
	if s.binlog != nil && !snapshot && !isBinlogCheckpoint(checkpoint) {
		snapshot = true // the first pass reads the table in a snapshot
	}
	return sqlkit.Count(ctx, pager{s: s}, s.tbl.name, checkpoint, snapshot)
}

// CountRows counts the rows after pos, or the live ones for a snapshot;
// the keyset condition takes the cursor twice.
func (p pager) CountRows(ctx context.Context, pos *sqlkit.Position, snapshot bool) (n int64, err error) {
	q := p.s.q
	row := p.s.db.QueryRowContext
	switch {
	case snapshot:
		err = row(ctx, q.countSnapshot).Scan(&n)
	case pos == nil:
		err = row(ctx, q.countFromStart).Scan(&n)
	case pos.ID == nil:
		err = row(ctx, q.countFrom, pos.U).Scan(&n)
	default:
		err = row(ctx, q.countAfter, pos.U, pos.U, *pos.ID).Scan(&n)
	}
	if err != nil {
		return 0, p.s.readError(ctx, err)
	}
	return n, nil
}
