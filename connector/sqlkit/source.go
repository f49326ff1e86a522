package sqlkit

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/syncd-io/syncd/connector"
)

// Guard is a source's closed state: every call checks Usable first.
type Guard struct {
	closed atomic.Bool
	// Closed is the error of calls on a closed source.
	Closed error
}

// Usable is ctx's error, or Closed once Close ran.
func (g *Guard) Usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if g.closed.Load() {
		return g.Closed
	}
	return nil
}

// Close reports whether this is the first call, the one that releases
// the connections.
func (g *Guard) Close() bool { return !g.closed.Swap(true) }

// ChangeError is a change's error as Write reports it: the operation, the
// record's ID and the table before the error, which mark turns into a
// connector.RefusedError when the server refused the change for good.
func ChangeError(c connector.Change, table string, err error, mark func(error) error) error {
	what := c.Op.String()
	if c.ID != "" {
		what += " " + c.ID
	}
	return fmt.Errorf("%s in %s: %w", what, table, mark(err))
}

// GetChunk bounds the ids of one Get statement.
const GetChunk = 1000

// GetInChunks reads ids GetChunk at a time with read and returns every
// record found.
func GetInChunks(ctx context.Context, ids []string, read func(ctx context.Context, chunk []string) ([]connector.Record, error)) ([]connector.Record, error) {
	var out []connector.Record
	for start := 0; start < len(ids); start += GetChunk {
		recs, err := read(ctx, ids[start:min(start+GetChunk, len(ids))])
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// RowCounter counts, with one statement, the rows a read from pos (nil:
// from the start) delivers, or every live row when snapshot is set.
type RowCounter interface {
	CountRows(ctx context.Context, pos *Position, snapshot bool) (int64, error)
}

// Count implements connector.Counter on a RowCounter: the figure is exact
// at the time of the query. label names the table in errors.
func Count(ctx context.Context, c RowCounter, label, checkpoint string, snapshot bool) (connector.Total, error) {
	var pos *Position
	if !snapshot {
		var err error
		if pos, err = ParseCheckpoint(checkpoint); err != nil {
			return connector.Total{}, fmt.Errorf("count %s: %w", label, err)
		}
	}
	n, err := c.CountRows(ctx, pos, snapshot)
	if err != nil {
		return connector.Total{}, err
	}
	return connector.Total{N: n, Known: true}, nil
}
