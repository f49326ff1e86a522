package connector

import "context"

// A writer sends a create, then syncd records the new record's id: a
// process stopped in between cannot tell whether the create was applied
// (ErrOutcomeUnknown), and such a create is set aside for an operator
// rather than risk making the record twice. A SIGKILL during a write-back
// round holding creates left each of them so, and their contacts alone in
// the workspace (issue 35: the poll soak's hour-long run at 2717425, 15
// contacts after one kill). A writer whose creates commit in a
// transaction (Type.StagesCreates) tells their ids before the commit: it
// calls the StageFunc the context carries (WithStage) with the ids of the
// transaction's creates, and commits only when it returns nil. So a
// create whose id no call told was never committed, and one whose told id
// is not found afterwards was not committed either (or its record was
// deleted since).

// StageFunc is told the ids of the creates a transaction is about to
// commit, by their index in the Write call's changes. An error stops the
// commit: none of the transaction's changes is applied.
type StageFunc func(ids map[int]string) error

type stageKey struct{}

// WithStage returns ctx carrying fn, for a Write call whose writer
// stages its creates.
func WithStage(ctx context.Context, fn StageFunc) context.Context {
	return context.WithValue(ctx, stageKey{}, fn)
}

// StageOf returns the StageFunc ctx carries, nil when none.
func StageOf(ctx context.Context) StageFunc {
	fn, _ := ctx.Value(stageKey{}).(StageFunc)
	return fn
}
