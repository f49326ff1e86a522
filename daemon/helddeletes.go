package daemon

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/state"
)

// The write-back's held deletions (reverse/massdelete.go): listed,
// approved and dropped by `syncd deletes` and the admin API. Approving
// and dropping take the connector's guard, like a round of the running
// applier, so they may run beside it.

// HeldDeletes lists the held deletions of a connector, or of every
// connector that reads workspace changes when name is "". It implements
// admin.HeldDeleter.
func (d *Daemon) HeldDeletes(name string) ([]state.HeldDelete, error) {
	return ListHeldDeletes(d.cfg, d.store.HeldDeletes, name)
}

// ListHeldDeletes lists held deletions from a state file, as HeldDeletes.
func ListHeldDeletes(cfg *config.Config, held *state.HeldDeletes, name string) ([]state.HeldDelete, error) {
	var out []state.HeldDelete
	found := false
	for _, cc := range cfg.Connectors {
		if !cc.ReadsWorkspace() || (name != "" && cc.Name != name) {
			continue
		}
		found = true
		hs, err := held.List(cc.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, hs...)
	}
	if name != "" && !found {
		return nil, fmt.Errorf("%w: %q (or it does not read workspace changes)", admin.ErrUnknownConnector, name)
	}
	return out, nil
}

// ApproveHeldDeletes deletes the records of a connector's held deletions
// and drops their links; it returns how many were deleted.
func (d *Daemon) ApproveHeldDeletes(ctx context.Context, name string) (int, error) {
	if !d.readsWorkspace(name) {
		return 0, fmt.Errorf("%w: %q (or it does not read workspace changes)", admin.ErrUnknownConnector, name)
	}
	a, err := d.NewApplier()
	if err != nil {
		return 0, err
	}
	return a.ApproveHeldDeletes(ctx, name)
}

// DropHeldDeletes forgets a connector's held deletions: the records stay.
// It returns how many were dropped.
func (d *Daemon) DropHeldDeletes(name string) (int, error) {
	if !d.readsWorkspace(name) {
		return 0, fmt.Errorf("%w: %q (or it does not read workspace changes)", admin.ErrUnknownConnector, name)
	}
	a, err := d.NewApplier()
	if err != nil {
		return 0, err
	}
	return a.DropHeldDeletes(name)
}

func (d *Daemon) readsWorkspace(name string) bool {
	for _, c := range d.reverseConnectors() {
		if c.Name == name {
			return true
		}
	}
	return false
}
