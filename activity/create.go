package activity

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/internal/logfield"
)

// errAwaitingLink leaves an event in the queue while the record made for
// its number waits for the forward pass that links it.
var errAwaitingLink = errors.New("record made for the number; waiting for its link")

// createRecords makes a record on t for each number (unknownNumbers:
// create), once per number: the record's id is kept in state, under the
// number, before the event is tried again; a number whose record is
// already made waits for its link. A crash between the system's create
// and that record may make a second record for the number.
func (l *Logger) createRecords(ctx context.Context, t *Target, numbers []string) error {
	for _, n := range numbers {
		key := "record:" + t.Name + ":" + n
		made, err := l.opts.Queue.Position(key)
		if err != nil {
			return err
		}
		if len(made) > 0 {
			continue
		}
		id, err := t.Create(ctx, n)
		if err != nil {
			if definite(err) {
				// Refused for good: counted as skipped, the event goes.
				l.log.WithField(logfield.Connector, t.Name).WithError(err).Warn("no record could be made for a number; its calls and texts are skipped")
				return l.opts.Queue.Count(t.Name, 1, 0)
			}
			return fmt.Errorf("create a record for a number: %w", err)
		}
		if err := l.opts.Queue.SetPosition(key, []byte(id)); err != nil {
			return err
		}
		l.log.WithField(logfield.Connector, t.Name).WithField(logfield.Record, id).Info("record made for a number no link knew")
	}
	return errAwaitingLink
}
