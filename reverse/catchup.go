package reverse

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// catchUpPrefix starts the ids of the events catch-up makes, so that they
// never collide with the service's webhook ids.
const catchUpPrefix = "catchup:"

// CatchUp recovers the changes whose webhooks were missed (syncd was
// down, a delivery failed for good): it lists the connector's contacts
// (its source, pages of 50) and writes to the inbox, as if delivered, each
// linked contact whose updatedAt is later than the version last applied,
// and each contact whose record is being created. The applier then
// applies them like any event, in the same order and with the same echo
// and conflict checks. The event id is made of the contact id and its
// updatedAt, so a version is enqueued once however often catch-up runs.
// It returns the number of events enqueued.
//
// Contacts deleted, or made in the app without the connector's source,
// while syncd was down are not found by such a listing: the service's
// delivery retries are what recovers them.
func (a *Applier) CatchUp(ctx context.Context, name string) (int, error) {
	t, ok := a.targets[name]
	if !ok {
		return 0, fmt.Errorf("catch up: no connector %q acts on workspace changes", name)
	}
	st := a.opts.Store
	n := 0
	params := workspace.ListContactsParams{Sources: []string{t.Source}, MaxResults: workspace.MaxPageSize}
	for c, err := range a.opts.Workspace.Contacts(ctx, params) {
		if err != nil {
			return n, fmt.Errorf("catch up %s: %w", name, err)
		}
		l, linked, err := st.Links.ByContact(t.Name, c.ID)
		if err != nil {
			return n, err
		}
		if linked && !c.UpdatedAt.After(l.ContactUpdatedAt) {
			continue
		}
		if !linked {
			if _, pending, err := st.Reverse.PendingOf(t.Name, c.ID); err != nil || !pending {
				if err != nil {
					return n, err
				}
				continue // the forward pass links it
			}
		}
		added, err := a.enqueue(c)
		if err != nil {
			return n, fmt.Errorf("catch up %s: %w", name, err)
		}
		if added {
			n++
		}
	}
	if n > 0 {
		a.log.WithField(logfield.Connector, name).WithField(logfield.Events, n).Info("catch-up found workspace changes missed while syncd was away")
		a.Notify()
	}
	return n, nil
}

// enqueue writes a contact.updated event of c to the inbox.
func (a *Applier) enqueue(c workspace.Contact) (bool, error) {
	id := catchUpPrefix + c.ID + ":" + strconv.FormatInt(c.UpdatedAt.UnixNano(), 10)
	res, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	body, err := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, CreatedAt: a.opts.Now().UTC(),
		Type: workspace.EventContactUpdated, Data: workspace.EventData{Object: res}})
	if err != nil {
		return false, err
	}
	_, dup, err := a.opts.Store.Inbox.Enqueue(state.InboxEvent{ID: id, Type: workspace.EventContactUpdated,
		ContactID: c.ID, ContactUpdatedAt: c.UpdatedAt, Body: body})
	return !dup, err
}

// noteListed records whether the version c, of event e, is known only
// from a catch-up listing: a delivered event of the same version clears
// it, whatever the order they come in.
func (g *group) noteListed(e state.InboxEvent, c workspace.Contact) {
	at := c.UpdatedAt.UnixNano()
	if !strings.HasPrefix(e.ID, catchUpPrefix) {
		if g.delivered == nil {
			g.delivered = map[int64]bool{}
		}
		g.delivered[at] = true
		delete(g.listed, at)
		return
	}
	if !g.delivered[at] {
		if g.listed == nil {
			g.listed = map[int64]bool{}
		}
		g.listed[at] = true
	}
}
