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
// changes fail with ctx's error.
func Write[DB any](ctx context.Context, w Writer[DB], changes []connector.Change) []connector.WriteResult {
	if len(changes) > 1 {
		if res, ok := writeInTx(ctx, w, changes); ok {
			return res
		}
	}
	return writeEach(ctx, w, changes)
}

// writeInTx applies the changes in one transaction. ok is false when
// nothing was written: a statement failed (which aborts the transaction),
// or the transaction could not begin or commit for certain.
func writeInTx[DB any](ctx context.Context, w Writer[DB], changes []connector.Change) (res []connector.WriteResult, ok bool) {
	tx, commit, rollback, err := w.Begin(ctx)
	if err != nil {
		return nil, false
	}
	res = make([]connector.WriteResult, len(changes))
	for i, c := range changes {
		id, err := w.Apply(ctx, tx, c)
		res[i].ID = id
		switch {
		case err == nil:
		case errors.Is(err, connector.ErrNotFound) || errors.Is(err, connector.ErrChanged):
			res[i].Err = w.ChangeError(c, err) // the statement ran: the transaction goes on
		default:
			_ = rollback(context.WithoutCancel(ctx))
			return nil, false
		}
	}
	if err := commit(ctx); err != nil {
		if !w.MaybeSent(err) {
			return nil, false // not committed: the caller writes each change
		}
		for i, c := range changes {
			if res[i].Err == nil {
				res[i].Err = w.ChangeError(c, fmt.Errorf("%w: commit: %w", connector.ErrOutcomeUnknown, err))
			}
		}
	}
	return res, true
}

// writeEach applies each change in its own statement, in order.
func writeEach[DB any](ctx context.Context, w Writer[DB], changes []connector.Change) []connector.WriteResult {
	res := make([]connector.WriteResult, len(changes))
	for i, c := range changes {
		res[i].ID = c.ID
		if err := ctx.Err(); err != nil {
			res[i].Err = err
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
