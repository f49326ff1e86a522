package daemon

import (
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// A mass delete the guard refused (a TRUNCATE, a source emptied by
// mistake) used to be one log line, hidden by the next pass: an
// incremental pass does not look for deletions again, so the contacts
// stayed, unexplained. It is now kept in state and shown by the status
// and the health page, with the command to act on it, until a full pass
// of the connector (a resync, or a pass of a connector that reads
// everything) goes through: with --allow-mass-delete once the source is
// checked, or because the records came back.

// noteMassDelete keeps a refused mass delete in state, or clears the one
// standing once a full pass went through; called for each recorded pass.
func (c *Connector) noteMassDelete(sum reconcile.Summary, err error) {
	if c.store == nil {
		return
	}
	switch {
	case errors.Is(err, reconcile.ErrMassDelete):
		r := state.RefusedDelete{At: time.Now(), Kind: sum.Kind, Reason: err.Error()}
		if serr := c.store.RefusedDeletes.Set(c.Name, r); serr != nil {
			c.log.WithError(serr).Error("could not record the refused mass delete; only this log line shows it")
			return
		}
		c.log.WithField(logfield.Action, refusedDeleteCommand("", c.Name)).
			Warn("mass delete refused: the status and the health page show it until a resync goes through")
	case err == nil && (sum.Kind == "resync" || !c.Type.Incremental):
		cleared, cerr := c.store.RefusedDeletes.Clear(c.Name)
		if cerr != nil {
			c.log.WithError(cerr).Warn("could not clear the refused mass delete")
		} else if cleared {
			c.log.WithField(logfield.Kind, sum.Kind).Info("refused mass delete cleared: a full pass went through")
		}
	}
}

// refusedDeleteCommand is the command that lets the connector's
// deletions go, once the source is checked.
func refusedDeleteCommand(configPath, name string) string {
	return fmt.Sprintf("syncd resync --config %s --connector %s --allow-mass-delete", orDefault(configPath), name)
}

// refusedDelete reads the connector's standing refusal for the status.
func refusedDelete(refused *state.RefusedDeletes, configPath, name string) (*admin.RefusedDelete, error) {
	r, ok, err := refused.Get(name)
	if err != nil || !ok {
		return nil, err
	}
	return &admin.RefusedDelete{RefusedDelete: r, Command: refusedDeleteCommand(configPath, name),
		Undo: fmt.Sprintf("syncd resync --config %s --connector %s", orDefault(configPath), name)}, nil
}

// orDefault is configPath, or the --config flag's default.
func orDefault(configPath string) string {
	if configPath == "" {
		return "syncd.yaml"
	}
	return configPath
}
