package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// DeadLetters lists the connector's dead letters ("" for all), oldest
// first, without their payloads. It implements admin.Daemon.
func (d *Daemon) DeadLetters(connector string) ([]admin.DeadLetter, error) {
	return ListDeadLetters(d.store.DeadLetters, connector)
}

// ListDeadLetters lists dead letters from a state file, as DeadLetters.
func ListDeadLetters(dl *state.DeadLetters, connector string) ([]admin.DeadLetter, error) {
	dls, err := dl.List(connector)
	if err != nil {
		return nil, err
	}
	out := make([]admin.DeadLetter, len(dls))
	for i, dl := range dls {
		dl.Payload = nil // the record itself: not for listings
		out[i] = admin.DeadLetter{ID: dl.ID, DeadLetter: dl}
	}
	return out, nil
}

// FieldWarnings lists the connector's field warnings ("" for all). It
// implements admin.Daemon.
func (d *Daemon) FieldWarnings(connector string) ([]admin.FieldWarning, error) {
	return ListFieldWarnings(d.store.FieldWarnings, connector)
}

// ListFieldWarnings lists field warnings from a state file, as
// FieldWarnings.
func ListFieldWarnings(fw *state.FieldWarnings, connector string) ([]admin.FieldWarning, error) {
	ws, err := fw.List(connector)
	if err != nil {
		return nil, err
	}
	out := make([]admin.FieldWarning, len(ws))
	for i, w := range ws {
		out[i] = admin.FieldWarning{FieldWarning: w}
	}
	return out, nil
}

// RetryDeadLetter runs the dead letter's record through its connector
// now (after any pass of that connector in progress), refusals included.
// Only the forward direction's dead letters can be retried; the reverse
// direction's hold a workspace event that a later change of the contact
// supersedes (admin.ErrNotRetryable). It implements admin.Daemon.
func (d *Daemon) RetryDeadLetter(ctx context.Context, id uint64) (admin.RetryResponse, error) {
	var resp admin.RetryResponse
	dl, err := d.store.DeadLetters.Get(id)
	if err != nil {
		return resp, err
	}
	if dl.Operation == activity.OperationActivity {
		return d.retryActivity(ctx, dl)
	}
	if !reconcile.ForwardOperation(dl.Operation) {
		return resp, fmt.Errorf("%w: dead letter %d is a %s of the workspace's changes; it is applied again when the contact changes, or drop it", admin.ErrNotRetryable, id, dl.Operation)
	}
	c, ok := d.Connector(dl.Connector)
	if !ok {
		return resp, fmt.Errorf("%w: dead letter %d belongs to connector %s, which is no longer configured; drop it", admin.ErrNotRetryable, id, dl.Connector)
	}
	c.running.Lock()
	sum, err := c.Recon.RetryDeadLetter(ctx, dl)
	c.running.Unlock()
	d.ops.ranPass(sum, err)
	resp.Summary = sum
	if _, gone := d.store.DeadLetters.Get(id); errors.Is(gone, state.ErrNotFound) {
		resp.Resolved = true
	}
	log := c.log.WithFields(sum.Fields()).WithFields(logrus.Fields{logfield.DeadLetter: id, logfield.Resolved: resp.Resolved})
	if err != nil {
		log.WithError(err).Warn("dead letter retry stopped early")
		return resp, err
	}
	log.Info("dead letter retried")
	return resp, nil
}

// retryActivity writes an activity dead letter's call or text on its
// connector's records again (activity.Logger.Retry).
func (d *Daemon) retryActivity(ctx context.Context, dl state.DeadLetter) (admin.RetryResponse, error) {
	var resp admin.RetryResponse
	var err error
	lg := d.activities.Load() // the running one, whose handling the retry waits for
	if lg == nil {
		if lg, err = d.NewActivityLogger(); err != nil {
			return resp, err
		}
	}
	if lg == nil {
		return resp, fmt.Errorf("%w: dead letter %d: no connector logs activities now; drop it", admin.ErrNotRetryable, dl.ID)
	}
	resp.Resolved, err = lg.Retry(ctx, dl)
	if errors.Is(err, activity.ErrNotRetryable) {
		return resp, fmt.Errorf("%w: dead letter %d: %w", admin.ErrNotRetryable, dl.ID, err)
	}
	log := logrus.NewEntry(d.log).WithFields(logrus.Fields{logfield.Connector: dl.Connector, logfield.DeadLetter: dl.ID, logfield.Resolved: resp.Resolved})
	if err != nil {
		log.WithError(err).Warn("activity dead letter retry failed")
		return resp, err
	}
	log.Info("activity dead letter retried")
	return resp, nil
}

// DropDeadLetter forgets the dead letter. A source that reads everything
// on each pass meets the record again and tries it anew. It implements
// admin.Daemon.
func (d *Daemon) DropDeadLetter(id uint64) error {
	return d.store.DeadLetters.Delete(id)
}

// Conflicts lists up to limit of the connector's conflicts ("" for all),
// newest first. It implements admin.Daemon.
func (d *Daemon) Conflicts(connector string, limit int) ([]admin.Conflict, error) {
	return ListConflicts(d.store.Conflicts, connector, limit)
}

// ListConflicts lists conflicts from a state file, as Conflicts.
func ListConflicts(cj *state.Conflicts, connector string, limit int) ([]admin.Conflict, error) {
	cs, err := cj.List(connector, limit)
	if err != nil {
		return nil, err
	}
	out := make([]admin.Conflict, len(cs))
	for i, c := range cs {
		out[i] = admin.Conflict{ID: c.ID, Conflict: c}
	}
	return out, nil
}

// Backup writes a consistent copy of the state file to w while the
// daemon goes on. It implements admin.Daemon.
func (d *Daemon) Backup(w io.Writer) (int64, error) { return d.store.Backup(w) }

var _ admin.Daemon = (*Daemon)(nil)
