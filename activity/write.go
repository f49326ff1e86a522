package activity

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/activitytext"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// write writes a on t exactly once per value:
//
//   - the value written last for a.Key (its hash) is not sent again;
//   - an activity written before is replaced (a summary or transcript
//     fills in its call's activity, never a second one);
//   - before the first write of a.Key an intent is recorded; an intent
//     without an activity id (a crash, or a lost answer, between the
//     write and its record) makes FindActivity look for the activity
//     before anything is created again;
//   - the activity's id and hash are recorded after the write.
func (l *Logger) write(ctx context.Context, t *Target, a connector.Activity) error {
	q := l.opts.Queue
	hash := hashOf(a)
	w, ok, err := q.Written(t.Name, a.Key)
	if err != nil {
		return err
	}
	if ok && !w.Intent && w.ActivityID != "" && w.Hash == hash {
		return nil
	}
	id := w.ActivityID
	// The first record of an id for the key counts as logged, also when
	// the activity was found after a crash rather than created now.
	first := id == ""
	if id == "" && ok && w.Intent {
		if id, err = t.Writer.FindActivity(ctx, a.Kind, a.Key, a.RecordID); err != nil {
			return fmt.Errorf("find activity: %w", err)
		}
	}
	if id == "" && !ok {
		if err := q.Intend(t.Name, a.Key, a.RecordID); err != nil {
			return err
		}
	}
	got, err := t.Writer.WriteActivity(ctx, id, a)
	if err != nil && id != "" && errors.Is(err, connector.ErrNotFound) {
		// Deleted in the system since: written anew.
		got, err = t.Writer.WriteActivity(ctx, "", a)
	}
	if err != nil {
		return err
	}
	if err := q.Wrote(t.Name, a.Key, state.WrittenActivity{ActivityID: got, Hash: hash, RecordID: a.RecordID}, first); err != nil {
		return err
	}
	l.mu.Lock()
	l.stats.Written++
	l.mu.Unlock()
	return nil
}

// definite reports whether err is a final answer (a refusal, a record
// that is gone) rather than one worth trying again.
func definite(err error) bool {
	var refused *connector.RefusedError
	return errors.As(err, &refused) || errors.Is(err, connector.ErrNotFound)
}

// deadLetter sets a refused activity aside with its reason, the private
// values cut out.
func (l *Logger) deadLetter(t *Target, a connector.Activity, cause error) error {
	// Cut the private values out; a reason still quoting a piece of one
	// is withheld whole.
	reason := activitytext.Redact(redact(cause.Error(), a), a)
	if _, err := l.opts.Store.DeadLetters.Add(state.DeadLetter{Connector: t.Name, Operation: OperationActivity, Key: a.Key,
		Reason: reason}); err != nil {
		return err
	}
	l.log.WithField(logfield.Connector, t.Name).WithField(logfield.Key, a.Key).WithField(logfield.Reason, reason).
		Warn("activity refused: set aside as a dead letter")
	return l.opts.Queue.Count(t.Name, 0, 1)
}
