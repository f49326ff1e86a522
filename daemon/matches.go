package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// The records held because they match more than one contact
// (reconcile.Held): listed and resolved by `syncd matches` and the admin
// API.

// HeldMatches lists a connector's held records ("" for every connector).
// It implements admin.MatchResolver.
func (d *Daemon) HeldMatches(name string) ([]admin.HeldMatch, error) {
	return ListHeldMatches(d.cfg, d.store.Matches, name)
}

// ListHeldMatches lists held records from a state file, as HeldMatches:
// by connector as configured, then by externalId.
func ListHeldMatches(cfg *config.Config, matches *state.Matches, name string) ([]admin.HeldMatch, error) {
	out := []admin.HeldMatch{}
	found := false
	for _, cc := range cfg.Connectors {
		if name != "" && cc.Name != name {
			continue
		}
		found = true
		held, err := matches.Held(cc.Name)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(held))
		for ext := range held {
			ids = append(ids, ext)
		}
		sort.Strings(ids)
		for _, ext := range ids {
			var h reconcile.Held
			if err := json.Unmarshal(held[ext], &h); err != nil {
				return nil, fmt.Errorf("held record %s/%s: %w", cc.Name, ext, err)
			}
			out = append(out, admin.HeldMatch{Connector: cc.Name, ExternalID: ext, Candidates: h.Candidates, Reason: h.Reason})
		}
	}
	if name != "" && !found {
		return nil, fmt.Errorf("%w %q", admin.ErrUnknownConnector, name)
	}
	return out, nil
}

// ResolveHeldMatch settles a held record as the operator chose, after any
// pass of its connector in progress. It implements admin.MatchResolver.
func (d *Daemon) ResolveHeldMatch(ctx context.Context, name, externalID, contactID string) (reconcile.Summary, error) {
	c, ok := d.Connector(name)
	if !ok {
		return reconcile.Summary{}, fmt.Errorf("%w %q", admin.ErrUnknownConnector, name)
	}
	c.running.Lock()
	sum, err := c.Recon.ResolveHeld(ctx, externalID, contactID)
	c.running.Unlock()
	d.ops.ranPass(sum, err)
	return sum, err
}

var _ admin.MatchResolver = (*Daemon)(nil)
