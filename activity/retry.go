package activity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/state"
)

// ErrNotRetryable is a dead letter Retry cannot write again: its call or
// text is no longer kept (ItemRetention), or its connector logs no
// activities any more.
var ErrNotRetryable = errors.New("activity dead letter cannot be retried")

// Retry writes the call or text of an activity dead letter (operation
// OperationActivity) on its connector's records again, now, as the
// forward direction retries a record: the item is read from the state
// (its key is kind:id:record), the records from the links as they are
// now, and activities written already are not sent again. The dead
// letter is removed when the write is done; a new refusal updates it
// with the new reason (resolved false). It waits for an event being
// handled. A failure that is not a refusal keeps the dead
// letter and is returned.
func (l *Logger) Retry(ctx context.Context, dl state.DeadLetter) (resolved bool, err error) {
	if dl.Operation != OperationActivity {
		return false, fmt.Errorf("%w: dead letter %d is a %s, not an activity", ErrNotRetryable, dl.ID, dl.Operation)
	}
	var t *Target
	for _, c := range l.opts.Targets {
		if c.Name == dl.Connector {
			t = c
		}
	}
	if t == nil {
		return false, fmt.Errorf("%w: connector %s logs no activities now; drop it", ErrNotRetryable, dl.Connector)
	}
	parts := strings.SplitN(dl.Key, ":", 3)
	if len(parts) < 2 {
		return false, fmt.Errorf("%w: key %q is not an activity's", ErrNotRetryable, dl.Key)
	}
	l.writing.Lock()
	defer l.writing.Unlock()
	it, err := l.loadItem(connector.ActivityKind(parts[0]), parts[1])
	if err != nil {
		return false, err
	}
	if !it.ready() {
		return false, fmt.Errorf("%w: %s %s is no longer kept (calls and texts are forgotten %s after their last event); drop it",
			ErrNotRetryable, parts[0], parts[1], ItemRetention)
	}
	before, err := l.opts.Queue.Counts(t.Name)
	if err != nil {
		return false, err
	}
	if err := l.writeTarget(ctx, t, it, false); err != nil {
		return false, fmt.Errorf("retry %s %s on %s: %w", it.Kind, it.ID, t.Name, err)
	}
	after, err := l.opts.Queue.Counts(t.Name)
	if err != nil {
		return false, err
	}
	if after.Failed != before.Failed {
		return false, nil // refused again: the letter holds the new reason
	}
	if err := l.opts.Store.DeadLetters.Delete(dl.ID); err != nil && !errors.Is(err, state.ErrNotFound) {
		return false, err
	}
	return true, nil
}
