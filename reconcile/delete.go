package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// deleteRecords applies onSourceDelete to records a connector reported as
// deleted (incremental connectors).
func (p *pass) deleteRecords(ctx context.Context, recs []connector.Record) error {
	var gone []state.Link
	deletedAt := map[string]time.Time{}
	for _, rec := range recs {
		ext, err := p.r.opts.Mapper.ExternalID(rec)
		if err != nil {
			p.r.log.WithError(err).WithField(logfield.Record, rec.ID).Warn("deleted record has no externalId; ignored")
			continue
		}
		l, ok, err := p.r.opts.Store.Links.Get(p.r.opts.Connector, ext)
		if err != nil {
			return fmt.Errorf("read link %s: %w", ext, err)
		}
		if ok {
			gone = append(gone, l)
			deletedAt[ext] = rec.UpdatedAt
		}
	}
	return p.applyDeletes(ctx, gone, deletedAt)
}

// sweepUnseen treats the links a complete pass of a non-incremental
// connector did not see as deletions at the source.
func (p *pass) sweepUnseen(ctx context.Context) error {
	if p.incomplete {
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
	return p.applyDeletes(ctx, gone, nil)
}

// applyDeletes follows onSourceDelete for links whose record is gone,
// behind the mass-delete breaker.
func (p *pass) applyDeletes(ctx context.Context, gone []state.Link, deletedAt map[string]time.Time) error {
	r := p.r
	if len(gone) == 0 || r.opts.OnSourceDelete == policy.DeleteIgnore {
		return nil
	}
	gone, err := p.editsAfterSourceDelete(ctx, gone, deletedAt)
	if err != nil {
		return err
	}
	p.mu.Lock()
	already := p.sum.Deleted
	p.mu.Unlock()
	if r.opts.OnSourceDelete == policy.DeleteRemove && !r.opts.AllowMassDelete && p.linked > 0 {
		if share := float64(already+len(gone)) / float64(p.linked); share > r.opts.MassDeleteThreshold {
			return fmt.Errorf("%w: this run would delete %d of %d linked contacts (%.0f%%), over the %.0f%% threshold; check the source, then run again with --allow-mass-delete",
				ErrMassDelete, already+len(gone), p.linked, share*100, r.opts.MassDeleteThreshold*100)
		}
	}
	for _, l := range gone {
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			p.plan.planned("delete", l.ExternalID, l.ContactID, nil, nil)
		} else {
			p.plan.planned("unlink", l.ExternalID, l.ContactID, nil, nil)
		}
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			err := r.opts.Workspace.DeleteContact(ctx, l.ContactID)
			if err != nil && !workspace.IsNotFound(err) {
				return fmt.Errorf("delete contact %s: %w", l.ContactID, err)
			}
		}
		if err := r.opts.Store.Links.Delete(r.opts.Connector, l.ExternalID); err != nil {
			return fmt.Errorf("drop link %s: %w", l.ExternalID, err)
		}
		p.warnings.drop(l.ExternalID)
		p.count(func(s *Summary) {
			if r.opts.OnSourceDelete == policy.DeleteRemove {
				s.Deleted++
			} else {
				s.Unlinked++
			}
		})
	}
	return nil
}
