package csv

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

// Changes reads the whole file, whatever the checkpoint: a file keeps no
// change times. Each batch's checkpoint names the file's size and
// modification time, for the record; it does not change the next read.
func (s *Source) Changes(ctx context.Context, checkpoint string, fn connector.BatchFunc) error {
	return s.read(ctx, true, fn)
}
