package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// revisit runs through the pass the records the write-back asked it to
// read again (state.Revisit): the write-back let a record's value win a
// conflict, a value only the pass brings to the contact, and the pass
// may have read that version of the record already, before the app's
// edit reached the write-back, leaving the app's value for the
// write-back to weigh. The changes feed shows a record once per change:
// without this, each side would keep its own value. One Get call per
// pass, only when asked; a record gone is forgotten (its deletion is
// the feed's to carry).
func (p *pass) revisit(ctx context.Context) error {
	r := p.r
	getter, ok := r.opts.Reader.(connector.Getter)
	if r.opts.Store.Revisits == nil || !ok || !r.opts.Type.Incremental {
		return nil
	}
	rs, err := r.opts.Store.Revisits.Revisits(r.opts.Connector)
	if err != nil || len(rs) == 0 {
		return err
	}
	ids := make([]string, len(rs))
	for i, rv := range rs {
		ids[i] = rv.RecordID
	}
	recs, err := getter.Get(ctx, ids)
	if err != nil {
		return fmt.Errorf("read %d records to revisit: %w", len(ids), err)
	}
	r.log.WithField(logfield.Records, len(recs)).Debug("reading again the records whose value won a conflict in the write-back")
	if len(recs) > 0 {
		if err := p.batch(ctx, recs); err != nil {
			return fmt.Errorf("revisit records: %w", err)
		}
	}
	return r.opts.Store.Revisits.DoneRevisits(rs)
}
