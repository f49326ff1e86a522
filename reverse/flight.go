package reverse

import (
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// A forward patch weighs the app edits it finds in the inbox before it is
// sent and once it is answered; an app edit that lands while the patch is
// in flight, whose webhook reaches the inbox only after that last look, is
// overwritten by the patch unweighed. Its version is older than the
// patch's answer, which the link records, so it reads as stale (issue 35:
// the poll soak, seed 3, an app edit 1 ms before syncd's delayed patch
// landed, gone from both sides with no journal entry). The forward
// direction records each patch's flight (state.Flight): a version whose
// event came after the pass's last look, older than the answer, holding
// for a patched field neither the patch's value nor the one the pass
// knew before, is the app's edit the patch overwrote. It is weighed
// against the record's value by the connector's policy, each at its own
// time, and journaled; when the app wins, its value is written to the
// record while the link keeps the contact's, so that the forward pass
// brings it back to the contact.

// flightEdit is an app edit a forward patch overwrote unweighed.
type flightEdit struct {
	app      string    // the app's value
	at       time.Time // the first unseen version holding it
	wrote    string    // the patch's value
	record   string    // the record's value (wrote, unless the patch put back an app edit)
	recordAt time.Time // when the record came to hold it
}

// flightEdits returns, by target, the app edits among g's versions that
// the contact's last forward patch overwrote unweighed.
func (b *batch) flightEdits(g *group) map[string]flightEdit {
	t := b.t
	if g.link == nil || g.deleted {
		return nil
	}
	f, ok := b.r.a.opts.Store.Reverse.FlightOf(t.Name, g.contactID)
	if !ok || g.link.ContactUpdatedAt.After(f.Answer) {
		return nil
	}
	unseen := map[int64]bool{}
	for _, e := range g.events {
		if e.Type == workspace.EventContactUpdated && e.Seq > f.Seq && e.ContactUpdatedAt.Before(f.Answer) {
			unseen[e.ContactUpdatedAt.UnixNano()] = true
		}
	}
	if len(unseen) == 0 {
		return nil
	}
	var vs []workspace.Contact
	var fs []mapping.Fields
	for _, v := range g.versions {
		if unseen[v.UpdatedAt.UnixNano()] {
			vs, fs = append(vs, v), append(fs, t.Mapper.FromContact(v))
		}
	}
	var out map[string]flightEdit
	for k, wrote := range f.Wrote {
		if g.link.Fields[k] != f.Linked[k] {
			continue // the link moved on since the patch
		}
		var e flightEdit
		found := false
		for i, v := range vs {
			val := fs[i][k]
			if val == wrote || val == f.Before[k] || val == f.Record[k] {
				continue // the patch's, the app's known before, or the record's (an earlier patch's echo)
			}
			if !found || val != e.app {
				e, found = flightEdit{app: val, at: v.UpdatedAt, wrote: wrote, record: f.Record[k], recordAt: f.RecordAt[k]}, true
			}
		}
		if found {
			if out == nil {
				out = map[string]flightEdit{}
			}
			out[k] = e
		}
	}
	return out
}

// flightUpdate is the update of g that weighs the flight edits fe alone:
// the contact taken as agreeing with the link otherwise (a stale version
// must not bring its other values back).
func (b *batch) flightUpdate(g *group, fe map[string]flightEdit) (*update, error) {
	u, err := b.compare(g)
	if err != nil {
		return nil, err
	}
	if g.contact.UpdatedAt.Before(g.link.ContactUpdatedAt) {
		u.ws, u.changed = copyFields(u.base), nil
	}
	u.flight = fe
	return u, nil
}

// weighFlight settles the flight edits of u against the record's values
// src (nil when the record cannot be read): a field the record changed
// since the patch is left to the usual comparison.
func (m *merge) weighFlight(t *Target, u *update, src mapping.Fields, rec *connector.Record) {
	for k, fe := range u.flight {
		if src != nil && src[k] != fe.record {
			continue
		}
		winner := t.Name
		if wins(t.Conflict, fe.at, rec, fe.recordAt) {
			winner = "workspace"
			m.want[k] = fe.app
		}
		m.journal(t, u, winner, k, fe.app, fe.record)
		m.appAt = fe.at
	}
}
