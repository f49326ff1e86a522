package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

// pass is one run or resync of a connector. It keeps what ties the
// stages together -- the run, what the pass learnt of the workspace, and
// the stages themselves -- and each stage keeps its own fields and the
// few store methods it calls. A batch flows through them in this order
// (batch.go):
//
//	guard  passGuard   take the Guard, read again what was written back
//	skip   skipper     drop the records whose link holds their fingerprint
//	map    mapStep     map to items; refuse twins; read stale ones again
//	merge  merger      move the contacts of merged records to survivors
//	link   (pass)      read each item's link (loadLinks)
//	match  matcher     look externalIds up; match by phone or e-mail
//	rekey  rekeyGuard  stop a mass re-key, or let records take over
//	write  writer      patch, create, adopt or link, with retries
//	settle deleter     unlink or delete what is gone at the source
//
// and every stage reports into the shared tally, letters (dead letters),
// warnings, plan hook and progress reporter.
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
	// digestAfter is the mapping digest to record when the read, which
	// started from the beginning, completes (see remap.go).
	digestAfter string
	// seen holds the externalIds this pass saw (see seenSet).
	seen seenSet

	// The stages, in the order a batch meets them.
	guard   passGuard  // guard.go
	skip    skipper    // skip.go
	mapper  *mapStep   // map.go, stale.go, duplicate.go
	merger  *merger    // merge.go, survivor.go
	matcher *matcher   // match.go
	index   indexer    // match.go: the index a listing builds
	rekey   rekeyGuard // rekey.go
	writer  *writer    // writer.go, write.go, adopt.go, appedits.go
	deleter *deleter   // delete.go

	// What every stage reports into.
	tally
	letters  *letters  // deadletter.go
	warnings *warnings // fieldwarning.go
	plan     planner   // plan.go: each write as decided (resync, dry run)
	report   reporter  // progress.go
}

// newPass starts a run of kind and wires its stages.
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
	p.deleter = &deleter{r: r, links: st.Links, conflicts: st.Conflicts, inbox: st.Inbox, letters: st.DeadLetters, tally: &p.tally, plan: &p.plan, warnings: p.warnings}
	if st.Deletions != nil {
		p.deleter.deletions = st.Deletions
	}
	p.guard.log = r.log
	p.report = reporter{tr: r.opts.Progress, reader: r.opts.Reader, log: r.log, tally: &p.tally}
	r.opts.Progress.Start(kind)
	return p, nil
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

// rules are the facts decide weighs beside an item's own.
func (p *pass) rules() rules {
	o := p.r.opts
	return rules{listed: p.listed, indexed: p.indexed, onWorkspaceDelete: o.OnWorkspaceDelete, onMatch: o.OnMatch, onAmbiguous: o.OnAmbiguous}
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

// holdGuard takes the guard for a whole pass (resync, retry).
func (r *Reconciler) holdGuard() (release func()) {
	if r.opts.Guard == nil {
		return func() {}
	}
	r.opts.Guard.Lock()
	return r.opts.Guard.Unlock
}
