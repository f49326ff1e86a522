package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/state"
)

// pass is one run or resync of a connector: its counters, its run record
// and what it knows about the workspace.
type pass struct {
	r    *Reconciler
	kind string
	run  state.Run

	// listed is true when the whole connector source was listed from the
	// workspace during this pass: an unlinked record then has no contact
	// and needs no look-up before its create.
	listed bool
	// linked is the number of links at the start of the pass.
	linked int
	// indexed is set when the connector has a match index to consult.
	indexed bool
	// full is set when the pass reads the whole source (a resync), so
	// that records it does not see are deletions.
	full bool
	// seen holds the externalIds this pass saw (see seenSet).
	seen seenSet
	// plan receives each write as it is decided (resync, dry run).
	plan planner
	// letters are the records set aside (deadletter.go), warnings the
	// values left out of contacts (fieldwarning.go), report the
	// progress shown (progress.go).
	letters  *letters
	warnings *warnings
	report   reporter
	// matcher and index are the match step and its index (match.go),
	// writer the write stage (write.go).
	matcher *matcher
	index   indexer
	writer  *writer
	// skip and mapper are the steps before the writes (skip.go, batch.go).
	skip   skipper
	mapper *mapStep
	// merger follows merges (merge.go), deleter deletions (delete.go).
	merger  *merger
	deleter *deleter

	// rekey is the mass re-key guard's state (rekey.go).
	rekey rekeyGuard

	// digestAfter is the mapping digest to record when the read, which
	// started from the beginning, completes (see remap.go).
	digestAfter string

	// guard, when set, is taken for each batch and each step that
	// touches links (see Guard); getter reads again the records written
	// back meanwhile.
	guard  *Guard
	getter connector.Getter

	tally
}

// tally is what a pass did so far; every stage counts into it.
type tally struct {
	mu  sync.Mutex
	sum Summary
}

func (r *Reconciler) newPass(kind string) (*pass, error) {
	run, err := r.opts.Store.Runs.Start(r.opts.Connector, kind)
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	p := &pass{r: r, kind: kind, run: run}
	p.sum = Summary{Connector: r.opts.Connector, Kind: kind}
	if p.letters, err = loadLetters(r.opts.Store.DeadLetters, r.opts.Connector, r.opts.Now, r.log, &p.tally); err != nil {
		return nil, err
	}
	if p.warnings, err = loadWarnings(r.opts.Store.FieldWarnings, r.opts.Connector, r.log); err != nil {
		return nil, err
	}
	st := r.opts.Store
	p.writer = &writer{r: r, links: st.Links, conflicts: st.Conflicts, inbox: st.Inbox, held: st.HeldDeletes,
		runID: run.ID, rulesOf: p.rules, tally: &p.tally, letters: p.letters, plan: &p.plan}
	p.matcher = &matcher{r: r, store: st.Matches, links: st.Links, tally: &p.tally, plan: &p.plan}
	p.index = indexer{r: r, store: st.Matches, matcher: p.matcher}
	p.skip = skipper{r: r, links: st.Links, letters: p.letters, tally: &p.tally}
	p.mapper = &mapStep{r: r, letters: p.letters, warnings: p.warnings}
	p.merger = &merger{r: r, links: st.Links, tally: &p.tally, plan: &p.plan}
	p.rekey = rekeyGuard{r: r, links: st.Links, rulesOf: p.rules, tally: &p.tally, merger: p.merger}
	p.deleter = &deleter{r: r, links: st.Links, conflicts: st.Conflicts, inbox: st.Inbox, tally: &p.tally, plan: &p.plan, warnings: p.warnings}
	p.report = reporter{tr: r.opts.Progress, reader: r.opts.Reader, log: r.log, tally: &p.tally}
	r.opts.Progress.Start(kind)
	return p, nil
}

func (t *tally) count(f func(s *Summary)) {
	t.mu.Lock()
	f(&t.sum)
	t.mu.Unlock()
}

// writes is the count of each kind of write so far.
func (t *tally) writes() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sum.Writes()
}

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
	release := p.guardRun()
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
		if err := p.exclusive(func() error { return p.listWorkspace(ctx) }); err != nil {
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
	if err := p.exclusive(func() error { return p.retryDeadLetters(ctx) }); err != nil {
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
		return p.exclusive(func() error { return p.sweepUnseen(ctx) })
	}
	return nil
}

// finish records the run in state and returns its summary.
func (p *pass) finish(start time.Time, calls int64, err error) (Summary, error) {
	r := p.r
	if cerr := p.seen.close(); cerr != nil {
		r.log.WithError(cerr).Warn("could not remove the seen set's temporary file")
	}
	p.mu.Lock()
	p.sum.APICalls = r.opts.Workspace.Calls() - calls
	p.sum.Duration = r.opts.Now().Sub(start)
	if errors.Is(err, connector.ErrBudgetSpent) {
		p.sum.Stopped = state.StoppedBudget
	}
	sum := p.sum
	p.mu.Unlock()
	r.opts.Progress.Finish()
	run := p.run
	run.FinishedAt = r.opts.Now()
	run.Created, run.Updated, run.Unchanged = sum.Created, sum.Updated, sum.Unchanged
	run.Deleted, run.Failed, run.APICalls = sum.Deleted, sum.Failed, sum.APICalls
	run.Adopted, run.Held = sum.Adopted, sum.Held
	run.Stopped = sum.Stopped
	if err != nil {
		run.Err = err.Error()
	}
	if ferr := r.opts.Store.Runs.Finish(run); ferr != nil {
		err = errors.Join(err, fmt.Errorf("record run: %w", ferr))
	}
	return sum, err
}

// writeContext returns the context for the writes of one batch: it
// outlives ctx by Options.Drain, so that a SIGTERM lets the batch in
// flight finish (and its links and checkpoint be saved) instead of
// cutting it.
func (p *pass) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	drain := p.r.opts.Drain
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(drain, cancel)
		context.AfterFunc(wctx, func() { t.Stop() })
	})
	return wctx, func() { stop(); cancel() }
}
