package csv

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

// Snapshot reads the whole file.
func (s *Source) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return s.read(ctx, false, fn)
}
