package reconcile

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// retryDeadLetters runs the records of due transient dead letters through
// the pass again: their batches' checkpoints moved past them.
func (p *pass) retryDeadLetters(ctx context.Context) error {
	r := p.r
	if !r.opts.Type.Incremental {
		return nil // the pass reads every record again anyway
	}
	dls, err := p.letters.store.List(r.opts.Connector)
	if err != nil {
		return fmt.Errorf("read dead letters: %w", err)
	}
	now := r.opts.Now()
	var recs []connector.Record
	for _, d := range dls {
		var dp deadPayload
		if d.Operation != opSync || json.Unmarshal(d.Payload, &dp) != nil || dp.Permanent || d.NextTry.After(now) {
			continue
		}
		recs = append(recs, dp.Record)
	}
	if len(recs) == 0 {
		return nil
	}
	r.log.WithField(logfield.Records, len(recs)).Info("retrying dead letters")
	if err := p.batch(ctx, recs); err != nil {
		return fmt.Errorf("retry dead letters: %w", err)
	}
	return nil
}

// RetryDeadLetter runs one dead letter's record through a pass now,
// whatever its kind (the operator's `deadletters retry`).
func (r *Reconciler) RetryDeadLetter(ctx context.Context, d state.DeadLetter) (Summary, error) {
	var dp deadPayload
	if err := json.Unmarshal(d.Payload, &dp); err != nil {
		return Summary{}, fmt.Errorf("dead letter %d: unreadable payload: %w", d.ID, err)
	}
	defer r.holdGuard()()
	start, calls := r.opts.Now(), r.opts.Workspace.Calls()
	p, err := r.newPass("retry")
	if err != nil {
		return Summary{}, err
	}
	delete(p.letters.known, d.Key) // retry even a refusal
	if err = p.batch(ctx, []connector.Record{dp.Record}); err == nil {
		if p.sum.Failed == 0 {
			err = r.opts.Store.DeadLetters.Delete(d.ID)
		}
	}
	return p.finish(start, calls, err)
}
