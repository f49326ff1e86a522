package reconcile

import (
	"context"

	"github.com/syncd-io/syncd/connector"
)

// The reconciler feeds Options.Progress (when set) at a few points of a
// pass: its start and end, its phases, the total the connector announces
// (connector.Counter) and, after each batch, the records done and the
// writes so far. Nothing here changes what a pass does.

// Writes returns the summary's writes by kind, as progress shows them.
func (s Summary) Writes() map[string]int64 {
	return map[string]int64{
		"created": int64(s.Created), "updated": int64(s.Updated), "unchanged": int64(s.Unchanged),
		"deleted": int64(s.Deleted), "unlinked": int64(s.Unlinked), "adopted": int64(s.Adopted),
		"held": int64(s.Held), "failed": int64(s.Failed),
	}
}

// phase reports the pass's phase.
func (p *pass) phase(name string) { p.r.opts.Progress.Phase(name) }

// countTotal asks the connector, when it can tell, how many records the
// read will deliver. A failed count only costs the total.
func (p *pass) countTotal(ctx context.Context, checkpoint string, snapshot bool) {
	tr := p.r.opts.Progress
	c, ok := p.r.opts.Reader.(connector.Counter)
	if tr == nil || !ok {
		return
	}
	t, err := c.Count(ctx, checkpoint, snapshot)
	if err != nil {
		p.r.log.WithError(err).Warn("the connector could not count its records; progress shows no total")
		return
	}
	if t.Known {
		tr.Total(t.N, t.Estimate)
	}
}

// progressed reports a batch of n records handled, and a better estimate
// of the total when the connector has one.
func (p *pass) progressed(n int) {
	tr := p.r.opts.Progress
	if tr == nil {
		return
	}
	tr.SetWrites(p.writes())
	tr.Add(n)
	if re, ok := p.r.opts.Reader.(connector.Reestimator); ok && tr.TotalIsEstimate() {
		if s, ok := tr.Snapshot(); ok {
			if t, ok := re.Reestimate(s.Done); ok {
				tr.Total(t.N, t.Estimate)
			}
		}
	}
}

// wroteOne reports one record of the batch in flight written (or set
// aside), so that progress moves within a batch, which can take minutes
// at the API's pace.
func (p *pass) wroteOne() {
	tr := p.r.opts.Progress
	if tr == nil {
		return
	}
	tr.SetWrites(p.writes())
	tr.Step()
}

func (p *pass) writes() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sum.Writes()
}
