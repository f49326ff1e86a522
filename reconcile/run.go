package reconcile

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/state"
)

// Run reads the connector's changes since its checkpoint and writes them
// to the workspace. It returns the pass's summary; an error means the pass
// stopped early (records already written stay written and linked).
func (r *Reconciler) Run(ctx context.Context) (Summary, error) {
	start := r.opts.Now()
	calls := r.opts.Workspace.Calls()
	p, err := r.newPass("run")
	if err != nil {
		return Summary{Connector: r.opts.Connector, Kind: "run"}, err
	}
	release := p.guard.take(r.opts.Guard, r.opts.Reader, r.opts.Type.Incremental)
	err = p.runChanges(ctx)
	release()
	return p.finish(start, calls, err)
}

func (p *pass) runChanges(ctx context.Context) error {
	r := p.r
	linked, err := r.opts.Store.Links.Count(r.opts.Connector)
	if err != nil {
		return fmt.Errorf("count links: %w", err)
	}
	if linked == 0 {
		// First sync, or the state file was lost: rebuild the links from
		// one listing of the connector's source, so that nothing that
		// already exists is created again.
		p.report.phase(progress.PhaseListing)
		if err := p.guard.exclusive(func() error { return p.listWorkspace(ctx) }); err != nil {
			return err
		}
		if linked, err = r.opts.Store.Links.Count(r.opts.Connector); err != nil {
			return fmt.Errorf("count links: %w", err)
		}
	}
	p.linked = linked
	if r.matching() && !p.indexed {
		if p.indexed, err = r.opts.Store.Matches.HasIndex(r.opts.Connector); err != nil {
			return fmt.Errorf("read match index: %w", err)
		}
	}
	if err := p.guard.exclusive(func() error { return p.retryDeadLetters(ctx) }); err != nil {
		return err
	}
	if err := p.guard.exclusive(func() error { return p.revisit(ctx) }); err != nil {
		return err
	}
	checkpoint := ""
	if r.opts.Type.Incremental {
		if checkpoint, err = r.opts.Store.Checkpoints.Get(r.opts.Connector, ""); err != nil {
			return fmt.Errorf("read checkpoint: %w", err)
		}
		remap, err := p.mappingChanged(checkpoint)
		if err != nil {
			return fmt.Errorf("read mapping digest: %w", err)
		}
		if remap {
			p.report.phase(progress.PhaseReading)
			return p.readRemapped(ctx)
		}
	}
	p.report.phase(progress.PhaseReading)
	p.report.countTotal(ctx, checkpoint, false)
	err = r.opts.Reader.Changes(ctx, checkpoint, func(ctx context.Context, b connector.Batch) error {
		if err := p.guardedBatch(ctx, b.Records); err != nil {
			return err
		}
		p.report.progressed(len(b.Records))
		if r.opts.Type.Incremental && b.Checkpoint != "" {
			if err := r.opts.Store.Checkpoints.Set(r.opts.Connector, "", b.Checkpoint); err != nil {
				return fmt.Errorf("save checkpoint: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read changes: %w", err)
	}
	if p.digestAfter != "" {
		if err := r.opts.Store.Checkpoints.SetMappingDigest(r.opts.Connector, p.digestAfter); err != nil {
			return fmt.Errorf("record mapping digest: %w", err)
		}
	}
	if !r.opts.Type.Incremental {
		// The connector read everything: linked records it did not see
		// were deleted at the source.
		p.report.phase(progress.PhaseSweeping)
		p.letters.clearStaleReadLetters()
		return p.guard.exclusive(func() error { return p.sweepUnseen(ctx) })
	}
	return nil
}

// sweepUnseen treats the links a complete pass of a non-incremental
// connector did not see as deletions at the source.
func (p *pass) sweepUnseen(ctx context.Context) error {
	if p.mapper.incomplete {
		p.r.log.Warn("some records had no externalId; deletions are not applied this run")
		return nil
	}
	var gone []state.Link
	var seenErr error
	err := p.r.opts.Store.Links.ForEachWhere(p.r.opts.Connector, func(ext []byte) bool {
		seen, err := p.seen.has(ext)
		if err != nil && seenErr == nil {
			seenErr = err
		}
		return err == nil && !seen
	}, func(l state.Link) error {
		if l.LastSeenRun != p.run.ID { // written by this pass: seen
			gone = append(gone, l)
		}
		return nil
	})
	if err == nil {
		err = seenErr
	}
	if err != nil {
		return fmt.Errorf("scan links: %w", err)
	}
	return p.deleter.applyDeletes(ctx, gone, nil, p.linked)
}
