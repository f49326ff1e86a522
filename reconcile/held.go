package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/workspace"
)

// ErrNotHeld is returned by ResolveHeld for a record that is not held.
var ErrNotHeld = errors.New("record is not held")

// ResolveHeld settles a held record as an operator chose: adopt (or link,
// per onMatch) the contact contactID, or, when contactID is "", create a
// new contact.
func (r *Reconciler) ResolveHeld(ctx context.Context, externalID, contactID string) (Summary, error) {
	held, err := r.opts.Store.Matches.Held(r.opts.Connector)
	if err != nil {
		return Summary{}, err
	}
	raw, ok := held[externalID]
	if !ok {
		return Summary{}, fmt.Errorf("%w: %s/%s", ErrNotHeld, r.opts.Connector, externalID)
	}
	var h Held
	if err := json.Unmarshal(raw, &h); err != nil {
		return Summary{}, fmt.Errorf("held record %s: %w", externalID, err)
	}
	start, calls := r.opts.Now(), r.opts.Workspace.Calls()
	p, err := r.newPass("resolve")
	if err != nil {
		return Summary{}, err
	}
	err = p.resolve(ctx, h.Record, contactID)
	if err == nil && p.sum.Failed == 0 {
		err = r.opts.Store.Matches.DeleteHeld(r.opts.Connector, externalID)
	}
	return p.finish(start, calls, err)
}

func (p *pass) resolve(ctx context.Context, rec connector.Record, contactID string) error {
	r := p.r
	m, err := r.opts.Mapper.ToContact(rec)
	if err != nil {
		return err
	}
	f := ContactFields(m)
	// The operator chose: this contact, or (contactID "") a new one.
	it := &item{rec: rec, mapped: m, fields: f, hash: f.Hash(), lookedUp: true, matched: true}
	if contactID != "" {
		var c workspace.Contact
		if ws, ok := r.opts.Workspace.(interface {
			GetContact(context.Context, string) (workspace.Contact, error)
		}); ok {
			if c, err = ws.GetContact(ctx, contactID); err != nil {
				return fmt.Errorf("read contact %s: %w", contactID, err)
			}
		} else {
			return errors.New("workspace client cannot read single contacts")
		}
		it.match = &c
	}
	return p.writer.write(ctx, it)
}
