package sqlkit

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/syncd-io/syncd/connector"
)

// Writer applies changes to one table of one dialect. DB is what a
// change's statements run on: the connection pool (a statement per
// transaction) or one transaction.
type Writer[DB any] interface {
	// Pool is the DB a change runs on alone.
	Pool() DB
	// Begin starts a transaction and returns it with its commit and
	// rollback.
	Begin(ctx context.Context) (tx DB, commit, rollback func(context.Context) error, err error)
	// Apply runs one change on db and returns the record's ID.
	Apply(ctx context.Context, db DB, c connector.Change) (string, error)
	// MaybeSent reports whether a statement that failed with err may
	// have reached the server and been applied.
	MaybeSent(err error) bool
	// ChangeError is a change's error as Write reports it (refusals
	// marked, secrets removed).
	ChangeError(c connector.Change, err error) error
}

// Write applies the changes in order; a failing change has its Err set
// and the others go on. Several changes go in one transaction, so that the
// server flushes its log once for them all rather than once a row; when a
// statement of it fails, or it does not commit for certain, nothing of it
// was written and each change is applied again in its own statement.
// Creates are not repeated by Write itself: a create whose answer was
// lost fails with the connection's error, and when the answer to a
// transaction's COMMIT is lost every change of it fails with
// connector.ErrOutcomeUnknown. When ctx ends midway, the remaining
// changes fail with ctx's error. With a connector.StageFunc in ctx, every
// create commits in a transaction after the function was told its id
// (connector/stage.go): alone, a create runs in a transaction of its own.
func Write[DB any](ctx context.Context, w Writer[DB], changes []connector.Change) []connector.WriteResult {
	if len(changes) > 1 {
		at := make([]int, len(changes))
		for i := range at {
			at[i] = i
		}
		if res, err := writeInTx(ctx, w, changes, at); err == nil {
			return res
		}
	}
	return writeEach(ctx, w, changes)
}

// writeInTx applies the changes, the call's changes at, in one
// transaction. An error means nothing was written: a statement failed
// (which aborts the transaction), the stage function refused, or the
// transaction could not begin or commit for certain.
func writeInTx[DB any](ctx context.Context, w Writer[DB], changes []connector.Change, at []int) ([]connector.WriteResult, error) {
	tx, commit, rollback, err := w.Begin(ctx)
	if err != nil {
		return nil, err
	}
	res := make([]connector.WriteResult, len(changes))
	created := map[int]string{}
	for i, c := range changes {
		id, err := w.Apply(ctx, tx, c)
		res[i].ID = id
		switch {
		case err == nil:
			if c.Op == connector.OpCreate {
				created[at[i]] = id
			}
		case errors.Is(err, connector.ErrNotFound) || errors.Is(err, connector.ErrChanged):
			res[i].Err = w.ChangeError(c, err) // the statement ran: the transaction goes on
		default:
			_ = rollback(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	if stage := connector.StageOf(ctx); stage != nil && len(created) > 0 {
		if err := stage(created); err != nil {
			_ = rollback(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("stage %d creates: %w", len(created), err)
		}
	}
	if err := commit(ctx); err != nil {
		if !w.MaybeSent(err) {
			return nil, err // not committed: the caller writes each change
		}
		for i, c := range changes {
			if res[i].Err == nil {
				res[i].Err = w.ChangeError(c, fmt.Errorf("%w: commit: %w", connector.ErrOutcomeUnknown, err))
			}
		}
	}
	return res, nil
}

// writeEach applies each change in its own statement, in order; a create
// with a stage function in ctx in a transaction of its own.
func writeEach[DB any](ctx context.Context, w Writer[DB], changes []connector.Change) []connector.WriteResult {
	res := make([]connector.WriteResult, len(changes))
	staged := connector.StageOf(ctx) != nil
	for i, c := range changes {
		res[i].ID = c.ID
		if err := ctx.Err(); err != nil {
			res[i].Err = err
			continue
		}
		if staged && c.Op == connector.OpCreate {
			res[i] = writeStaged(ctx, w, c, i)
			continue
		}
		id, err := w.Apply(ctx, w.Pool(), c)
		if c.Op == connector.OpCreate {
			res[i].ID = id
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				if errors.Is(err, connector.ErrOutcomeUnknown) {
					ctxErr = fmt.Errorf("%w: %w", connector.ErrOutcomeUnknown, ctxErr)
				}
				err = ctxErr
			}
			res[i].Err = w.ChangeError(c, err)
		}
	}
	return res
}

// writeStaged applies create c, the call's change i, in a transaction of
// its own. A failure before the commit applied nothing, whatever the
// connection's state: it is not of unknown outcome.
func writeStaged[DB any](ctx context.Context, w Writer[DB], c connector.Change, i int) connector.WriteResult {
	res, err := writeInTx(ctx, w, []connector.Change{c}, []int{i})
	if err == nil {
		return res[0]
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		err = ctxErr
	} else if errors.Is(err, connector.ErrOutcomeUnknown) {
		err = &notCommitted{err}
	}
	return connector.WriteResult{Err: w.ChangeError(c, err)}
}

// notCommitted is a statement's failure of unknown outcome inside a
// transaction that never committed: nothing was applied.
type notCommitted struct{ err error }

func (e *notCommitted) Error() string {
	return e.err.Error() + " (in a transaction not committed: not applied)"
}

// SortedNames returns the keys of fields in order, so that one set of
// fields is always one statement.
func SortedNames(fields map[string]any) []string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
