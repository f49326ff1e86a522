package reconcile

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// ResyncOptions control a manual full resync.
type ResyncOptions struct {
	// DryRun computes the plan and changes nothing, in the workspace or
	// in state.
	DryRun bool
	// Plan, when set, receives each write the resync makes (or would
	// make, in a dry run) as it is decided.
	Plan func(PlanEntry)
	// Progress, when set, is called with the number of source records
	// handled so far, after each batch.
	Progress func(records int)
	// AllowMassDelete lifts the mass-delete threshold for this resync
	// alone (syncd resync --allow-mass-delete through a running daemon).
	AllowMassDelete bool
	// AllowMassRekey lets this resync alone go on when it looks like a
	// change of the source's ids (syncd resync --allow-mass-rekey through
	// a running daemon).
	AllowMassRekey bool
}

// Resync compares the whole source with every workspace contact of the
// connector's source and repairs both the contacts and the links: links
// are rebuilt from one listing of the workspace, every live record is
// compared with its contact (created or patched where it differs), and
// contacts whose record is gone follow onSourceDelete.
func (r *Reconciler) Resync(ctx context.Context, o ResyncOptions) (Summary, error) {
	if o.DryRun {
		return r.dryRun(ctx, o)
	}
	if (o.AllowMassDelete && !r.opts.AllowMassDelete) || (o.AllowMassRekey && !r.opts.AllowMassRekey) {
		allowed := &Reconciler{opts: r.opts, log: r.log}
		allowed.opts.AllowMassDelete = r.opts.AllowMassDelete || o.AllowMassDelete
		allowed.opts.AllowMassRekey = r.opts.AllowMassRekey || o.AllowMassRekey
		return allowed.Resync(ctx, o)
	}
	defer r.holdGuard()()
	start, calls := r.opts.Now(), r.opts.Workspace.Calls()
	p, err := r.newPass("resync")
	if err != nil {
		return Summary{Connector: r.opts.Connector, Kind: "resync"}, err
	}
	p.plan.fn, p.full = o.Plan, true
	err = p.resync(ctx, o.Progress)
	return p.finish(start, calls, err)
}

func (p *pass) resync(ctx context.Context, report func(int)) error {
	r := p.r
	// The links are derived from the workspace: drop them and rebuild.
	// A crash in between leaves no links, which the next run rebuilds the
	// same way.
	if err := r.opts.Store.Links.Drop(r.opts.Connector); err != nil {
		return fmt.Errorf("drop links: %w", err)
	}
	p.report.phase(progress.PhaseListing)
	if err := p.listWorkspace(ctx); err != nil {
		return err
	}
	linked, err := r.opts.Store.Links.Count(r.opts.Connector)
	if err != nil {
		return fmt.Errorf("count links: %w", err)
	}
	p.linked = linked
	var done atomic.Int64
	p.report.phase(progress.PhaseReading)
	p.report.countTotal(ctx, "", true)
	err = r.opts.Reader.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		if err := p.batch(ctx, b.Records); err != nil {
			return err
		}
		p.report.progressed(len(b.Records))
		n := done.Add(int64(len(b.Records)))
		if report != nil {
			report(int(n))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read snapshot: %w", err)
	}
	p.report.phase(progress.PhaseSweeping)
	if err := p.sweepUnseen(ctx); err != nil {
		return err
	}
	// Every record was read under this mapping (see remap.go).
	if err := r.opts.Store.Checkpoints.SetMappingDigest(r.opts.Connector, r.opts.Mapper.Digest()); err != nil {
		return fmt.Errorf("record mapping digest: %w", err)
	}
	return nil
}

// dryRun runs the resync's own code against a scratch state file and a
// workspace that records writes instead of making them, so that the plan
// is exactly what a real resync would do at this moment.
func (r *Reconciler) dryRun(ctx context.Context, o ResyncOptions) (Summary, error) {
	dir, err := os.MkdirTemp("", "syncd-dry-run-")
	if err != nil {
		return Summary{}, fmt.Errorf("dry run: %w", err)
	}
	defer os.RemoveAll(dir)
	scratch, err := state.Open(filepath.Join(dir, "plan.db"), state.Options{NoSync: true})
	if err != nil {
		return Summary{}, fmt.Errorf("dry run: %w", err)
	}
	defer scratch.Close()
	opts := r.opts
	opts.Store = StoreOf(scratch)
	opts.Workspace = &dryWorkspace{Workspace: r.opts.Workspace}
	opts.AllowMassDelete = true // the plan shows deletions; the breaker guards real runs
	opts.AllowMassRekey = true  // and the records that take over a vanished one's contact
	opts.Guard = nil            // nothing the write-back reads is written
	dry := &Reconciler{opts: opts, log: r.log.WithField(logfield.DryRun, true)}
	o.DryRun = false
	sum, err := dry.Resync(ctx, o)
	sum.Kind = "dry-run"
	return sum, err
}

// dryWorkspace passes reads through and records nothing but a count of
// writes; the pass reports each write through its plan hook.
type dryWorkspace struct {
	Workspace
	n atomic.Int64
}

func (d *dryWorkspace) CreateContact(ctx context.Context, in workspace.ContactCreate) (workspace.Contact, error) {
	id := fmt.Sprintf("planned-%d", d.n.Add(1))
	ext := in.ExternalID
	return workspace.Contact{ID: id, ExternalID: &ext}, nil
}

func (d *dryWorkspace) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	return workspace.Contact{ID: id}, nil
}

func (d *dryWorkspace) DeleteContact(ctx context.Context, id string) error { return nil }

func (d *dryWorkspace) Contacts(ctx context.Context, p workspace.ListContactsParams) iter.Seq2[workspace.Contact, error] {
	return d.Workspace.Contacts(ctx, p)
}
