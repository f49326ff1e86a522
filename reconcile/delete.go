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

// deleter is the settle step for records gone at the source: it unlinks
// or deletes their contacts per onSourceDelete, behind the mass-delete
// guard, and weighs the app edits made around each deletion.
type deleter struct {
	r     *Reconciler
	links interface {
		Get(connector, externalID string) (l state.Link, ok bool, err error)
		Delete(connector, externalID string) error
	}
	conflicts interface {
		Add(c state.Conflict) (uint64, error)
	}
	inbox interface {
		Enqueue(e state.InboxEvent) (seq uint64, duplicate bool, err error)
	}
	tally    *tally
	plan     *planner
	warnings *warnings
}

// deleteRecords applies onSourceDelete to records a connector reported as
// deleted (incremental connectors).
func (d *deleter) deleteRecords(ctx context.Context, recs []connector.Record, linked int) error {
	var gone []state.Link
	deletedAt := map[string]time.Time{}
	for _, rec := range recs {
		ext, err := d.r.opts.Mapper.ExternalID(rec)
		if err != nil {
			d.r.log.WithError(err).WithField(logfield.Record, rec.ID).Warn("deleted record has no externalId; ignored")
			continue
		}
		l, ok, err := d.links.Get(d.r.opts.Connector, ext)
		if err != nil {
			return fmt.Errorf("read link %s: %w", ext, err)
		}
		if ok {
			gone = append(gone, l)
			deletedAt[ext] = rec.UpdatedAt
		}
	}
	return d.applyDeletes(ctx, gone, deletedAt, linked)
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

// applyDeletes follows onSourceDelete for links whose record is gone,
// behind the mass-delete breaker.
func (d *deleter) applyDeletes(ctx context.Context, gone []state.Link, deletedAt map[string]time.Time, linked int) error {
	r := d.r
	if len(gone) == 0 || r.opts.OnSourceDelete == policy.DeleteIgnore {
		return nil
	}
	gone, err := d.editsAfterSourceDelete(ctx, gone, deletedAt)
	if err != nil {
		return err
	}
	d.tally.mu.Lock()
	already := d.tally.sum.Deleted
	d.tally.mu.Unlock()
	if r.opts.OnSourceDelete == policy.DeleteRemove && !r.opts.AllowMassDelete && linked > 0 {
		if share := float64(already+len(gone)) / float64(linked); share > r.opts.MassDeleteThreshold {
			return fmt.Errorf("%w: this run would delete %d of %d linked contacts (%.0f%%), over the %.0f%% threshold; check the source, then run again with --allow-mass-delete",
				ErrMassDelete, already+len(gone), linked, share*100, r.opts.MassDeleteThreshold*100)
		}
	}
	for _, l := range gone {
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			d.plan.planned("delete", l.ExternalID, l.ContactID, nil, nil)
		} else {
			d.plan.planned("unlink", l.ExternalID, l.ContactID, nil, nil)
		}
		if r.opts.OnSourceDelete == policy.DeleteRemove {
			err := r.opts.Workspace.DeleteContact(ctx, l.ContactID)
			if err != nil && !workspace.IsNotFound(err) {
				return fmt.Errorf("delete contact %s: %w", l.ContactID, err)
			}
		}
		if err := d.links.Delete(r.opts.Connector, l.ExternalID); err != nil {
			return fmt.Errorf("drop link %s: %w", l.ExternalID, err)
		}
		d.warnings.drop(l.ExternalID)
		d.tally.count(func(s *Summary) {
			if r.opts.OnSourceDelete == policy.DeleteRemove {
				s.Deleted++
			} else {
				s.Unlinked++
			}
		})
	}
	return nil
}
