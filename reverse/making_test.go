package reverse

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/workspace"
)

// beforeCreate runs before once, just before the first contact create.
type beforeCreate struct {
	*workspace.Client
	before func()
}

func (w *beforeCreate) CreateContact(ctx context.Context, c workspace.ContactCreate) (workspace.Contact, error) {
	if w.before != nil {
		w.before()
		w.before = nil
	}
	return w.Client.CreateContact(ctx, c)
}

// TestRowEditedWhileItsContactIsMade: a new row is read by the pass, its
// first name edited while the create of its contact is in flight (a
// throttled API), and read so by the observer; the contact is made from
// the older copy. The app then edits the first name, and the row its
// company, moving its updated_at past the app's edit. The row's first
// name keeps the time the observer read it at: the app's newer edit wins
// on both sides (issue 35: the poll soak's last journaled loss of the
// hour-long run at 419f7da, the row's older first name winning by the
// company's later edit).
func TestRowEditedWhileItsContactIsMade(t *testing.T) {
	e := newEnv(t, nil)
	e.mem.put("1", map[string]any{"id": "1", "first_name": "Old", "last_name": "Last1", "email": "p1@example.com", "title": nil, "company": "Acme"})
	e.mem.setUpdatedAt("1", time.Now().Add(-2*time.Second))
	var r *reconcile.Reconciler
	e.fwd = &beforeCreate{Client: e.ws, before: func() {
		e.mem.put("1", map[string]any{"first_name": "Table"})
		e.mem.setUpdatedAt("1", time.Now().Add(-time.Second))
		if err := r.NewObserver().Observe(t.Context()); err != nil {
			t.Error(err)
		}
	}}
	r = e.reconciler()
	e.fwd = nil
	if sum, err := r.Run(t.Context()); err != nil || sum.Created != 1 {
		t.Fatalf("forward pass %v, %v; want the contact made", sum, err)
	}
	if got := e.link("1").Fields["firstName"]; got != "Old" {
		t.Fatalf("link's firstName %q, want the copy's (the create's)", got)
	}
	id := e.link("1").ContactID
	app := e.appPatch(id, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{FirstName: workspace.Some("App")}})
	e.event("app", workspace.EventContactUpdated, app)
	e.mem.put("1", map[string]any{"company": "TableCo"})
	e.mem.setUpdatedAt("1", app.UpdatedAt.Add(time.Millisecond))
	e.drain()
	e.mem.setUpdatedAt("1", time.Now()) // the write-back's UPDATE, as a trigger does
	e.forward()
	e.settle()
	e.checkFirstName("App", "workspace")
	if got := *e.contact("1").DefaultFields.Company; got != "TableCo" {
		t.Errorf("contact's company %q, want the row's", got)
	}
}
