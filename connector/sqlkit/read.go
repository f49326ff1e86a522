package sqlkit

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
)

// Pager reads pages of one table in one SQL dialect.
type Pager interface {
	// ChangesPage reads at most limit rows after pos (nil: from the
	// start) in (cursor, id) order, live and deleted, and returns them
	// with the position of the last.
	ChangesPage(ctx context.Context, pos *Position, limit int) ([]connector.Record, Position, error)
	// SnapshotPage reads at most limit live rows whose id comes after
	// after (nil: from the first) in id order.
	SnapshotPage(ctx context.Context, after *string, limit int) ([]connector.Record, Position, error)
	// SafeBound returns the latest cursor a checkpoint may hold (the
	// server's clock minus the lookback, in the cursor's text form), or
	// "" when there is no lookback.
	SafeBound(ctx context.Context) (string, error)
	// After reports whether cursor a comes after cursor b.
	After(ctx context.Context, a, b string) (bool, error)
}

// ReadChanges reads the rows after pos in batches of batchSize, each with
// the checkpoint after it, never later than the pager's SafeBound taken
// before the first page. label prefixes the errors of fn ("postgres batch of t"). It returns
// the rows and batches delivered.
func ReadChanges(ctx context.Context, p Pager, label string, pos *Position, batchSize int, fn connector.BatchFunc) (rows, batches int, err error) {
	safe, err := p.SafeBound(ctx)
	if err != nil {
		return 0, 0, err
	}
	for {
		recs, last, err := p.ChangesPage(ctx, pos, batchSize)
		if err != nil {
			return rows, batches, err
		}
		if len(recs) == 0 {
			return rows, batches, nil
		}
		pos = &last
		cp := last
		if safe != "" {
			recent, err := p.After(ctx, last.U, safe)
			if err != nil {
				return rows, batches, err
			}
			if recent {
				cp = Position{U: safe}
			}
		}
		if err := ctx.Err(); err != nil {
			return rows, batches, err
		}
		if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
			return rows, batches, fmt.Errorf("%s: %w", label, err)
		}
		rows += len(recs)
		batches++
		if len(recs) < batchSize {
			return rows, batches, nil
		}
	}
}

// ReadSnapshot reads every live row once, in id order, in batches of
// batchSize.
func ReadSnapshot(ctx context.Context, p Pager, label string, batchSize int, fn connector.BatchFunc) error {
	var after *string
	for {
		recs, last, err := p.SnapshotPage(ctx, after, batchSize)
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
			return fmt.Errorf("%s: %w", label, err)
		}
		if len(recs) < batchSize {
			return nil
		}
	}
}
