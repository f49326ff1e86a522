package reconcile

import (
	"context"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/progress"
)

// The reconciler feeds Options.Progress (when set) at a few points of a
// pass: its start and end, its phases, the total the connector announces
// (connector.Counter) and, after each batch, the records done and the
// writes so far. Nothing here changes what a pass does.

// reporter is the pass's progress as Options.Progress shows it: every
// stage may report through it, none reads it back.
type reporter struct {
	tr     *progress.Tracker
	reader connector.Source
	log    *logrus.Entry
	tally  *tally
}

// phase reports the pass's phase.
func (rp reporter) phase(name string) { rp.tr.Phase(name) }

// countTotal asks the connector, when it can tell, how many records the
// read will deliver. A failed count only costs the total.
func (rp reporter) countTotal(ctx context.Context, checkpoint string, snapshot bool) {
	tr := rp.tr
	c, ok := rp.reader.(connector.Counter)
	if tr == nil || !ok {
		return
	}
	t, err := c.Count(ctx, checkpoint, snapshot)
	if err != nil {
		rp.log.WithError(err).Warn("the connector could not count its records; progress shows no total")
		return
	}
	if t.Known {
		tr.Total(t.N, t.Estimate)
	}
}

// progressed reports a batch of n records handled, and a better estimate
// of the total when the connector has one.
func (rp reporter) progressed(n int) {
	tr := rp.tr
	if tr == nil {
		return
	}
	tr.SetWrites(rp.tally.writes())
	tr.Add(n)
	if re, ok := rp.reader.(connector.Reestimator); ok && tr.TotalIsEstimate() {
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
func (rp reporter) wroteOne() {
	tr := rp.tr
	if tr == nil {
		return
	}
	tr.SetWrites(rp.tally.writes())
	tr.Step()
}
