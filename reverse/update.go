package reverse

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
)

// sourceURLKey is the sourceUrl pseudo-field of Link.Fields.
const sourceURLKey = "sourceUrl"

// update is the plan of one linked contact's new version.
type update struct {
	g *group
	// ws are the contact's canonical values; base the values last agreed
	// (Link.Fields plus the reverse-only values).
	ws, base mapping.Fields
	// changed are the reverse targets whose workspace value differs
	// from base.
	changed  []string
	recordID string
}

// planUpdates decides, for each linked contact's new version, between
// dropping it (older than applied, or the connector does not write back),
// recording an echo, and writing the fields that differ from what the
// record holds; it settles conflicts by policy.
func (b *batch) planUpdates(ctx context.Context, groups []*group) error {
	t, r := b.t, b.r
	var work []*update
	for _, g := range groups {
		if !t.writesBack() {
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
			continue
		}
		if g.contact.UpdatedAt.Before(g.link.ContactUpdatedAt) {
			r.a.count(func(s *Stats) { s.Stale++ })
			r.ack(g)
			continue
		}
		u, err := b.compare(g)
		if err != nil {
			return err
		}
		if len(u.changed) == 0 {
			r.a.count(func(s *Stats) { s.Echoes++ })
			b.record(u, u.base, false)
			continue
		}
		if u.recordID == "" {
			r.failed(t, g, opWriteBack, errors.New("the link holds no record id (made by a listing); run a forward pass or syncd resync first"), true)
			continue
		}
		work = append(work, u)
	}
	if len(work) == 0 {
		return nil
	}
	records := map[string]*connector.Record{}
	if t.Getter != nil {
		ids := make([]string, len(work))
		for i, u := range work {
			ids[i] = u.recordID
		}
		recs, err := t.Getter.Get(ctx, ids)
		if err != nil {
			for _, u := range work {
				r.failed(t, u.g, opWriteBack, &wholeCallError{err}, false)
			}
			return fmt.Errorf("read %d records: %w", len(ids), err)
		}
		for i := range recs {
			records[recs[i].ID] = &recs[i]
		}
	}
	for _, u := range work {
		var rec *connector.Record
		if t.Getter != nil {
			if rec = records[u.recordID]; rec == nil || rec.Deleted {
				r.failed(t, u.g, opWriteBack, fmt.Errorf("record %s: %w", u.recordID, connector.ErrNotFound), true)
				continue
			}
		}
		b.planWrite(u, rec)
	}
	return nil
}

// compare reads a linked contact's values against what was agreed.
func (b *batch) compare(g *group) (*update, error) {
	t := b.t
	fwd := forwardSet(t.Mapper)
	agreedRev, err := b.r.a.opts.Store.ReverseAgreed(t.Name, g.contactID)
	if err != nil {
		return nil, err
	}
	base := mapping.Fields{}
	for k, v := range g.link.Fields {
		base[k] = v
	}
	for k, v := range agreedRev {
		if !fwd[k] {
			base[k] = v
		}
	}
	u := &update{g: g, ws: t.Mapper.FromContact(g.contact), base: base, recordID: g.link.RecordID}
	for _, k := range t.Mapper.ReverseTargets() {
		if u.ws[k] != base[k] {
			u.changed = append(u.changed, k)
		}
	}
	if u.recordID == "" {
		// A link made by a listing has no record id; when the record's
		// id is the externalId, it is known all the same.
		if _, err := t.Mapper.ExternalID(connector.Record{ID: g.link.ExternalID}); err == nil {
			u.recordID = g.link.ExternalID
		}
	}
	return u, nil
}

// planWrite adds the update of the fields the record does not hold yet;
// rec is nil when the connector cannot read records.
func (b *batch) planWrite(u *update, rec *connector.Record) {
	t, r := b.t, b.r
	fwd := forwardSet(t.Mapper)
	rt := t.Mapper.ReverseTargets()
	// cur is what the record holds, as far as it can be known: its
	// forward-mapped values for targets flowing both ways, the agreed
	// values otherwise.
	cur := mapping.Fields{}
	for _, k := range rt {
		cur[k] = u.base[k]
	}
	var src mapping.Fields
	if rec != nil {
		if m, err := t.Mapper.ToContact(*rec); err == nil {
			src = m.Fields
			for _, k := range rt {
				if fwd[k] {
					cur[k] = src[k]
				}
			}
		}
	}
	conflict := map[string]bool{}
	for _, k := range u.changed {
		if src != nil && fwd[k] && src[k] != u.base[k] && src[k] != u.ws[k] {
			conflict[k] = true
		}
	}
	workspaceWins := true
	if len(conflict) > 0 {
		workspaceWins = wins(t.Conflict, u.g.contact.UpdatedAt, rec)
		cf := state.Conflict{Connector: t.Name, ExternalID: u.g.link.ExternalID, ContactID: u.g.contactID,
			Policy: t.Conflict.String(), Winner: "workspace", Workspace: map[string]string{}, Source: map[string]string{}}
		if !workspaceWins {
			cf.Winner = t.Name
		}
		for k := range conflict {
			cf.Workspace[k], cf.Source[k] = u.ws[k], src[k]
		}
		r.commit.Conflicts = append(r.commit.Conflicts, cf)
		r.a.log.WithFields(map[string]any{"connector": t.Name, "contact": u.g.contactID, "policy": t.Conflict, "winner": cf.Winner}).
			Info("both sides changed since the last sync; conflict settled by policy")
	}
	want := cur.Only(rt)
	agreed := copyFields(u.base)
	for _, k := range u.changed {
		if conflict[k] && !workspaceWins {
			continue // the record's value stays; the forward pass brings it over
		}
		want[k] = u.ws[k]
		agreed[k] = u.ws[k]
	}
	fields, err := t.Mapper.RecordChanges(cur.Only(rt), want)
	if err != nil {
		r.failed(t, u.g, opWriteBack, err, true)
		return
	}
	if len(fields) == 0 {
		r.a.count(func(s *Stats) { s.Unchanged++ })
		b.record(u, agreed, false)
		return
	}
	ch := connector.Change{Op: connector.OpUpdate, ID: u.recordID, Fields: fields}
	if rec != nil {
		// The decision holds only for the record as read: a table edit
		// made since must not be overwritten unseen.
		ch.IfUnchangedSince = rec.UpdatedAt
	}
	b.add(ch, func(res connector.WriteResult) {
		if errors.Is(res.Err, connector.ErrChanged) {
			// Not a failure: the events stay for the next round, which
			// reads the record again and decides anew.
			r.res.Retry++
			r.a.count(func(s *Stats) { s.Retried++ })
			r.a.log.WithFields(map[string]any{"connector": t.Name, "contact": u.g.contactID}).
				Info("record changed while its write-back was decided; deciding again next round")
			return
		}
		if res.Err != nil {
			r.failed(t, u.g, opWriteBack, res.Err, errors.Is(res.Err, connector.ErrNotFound))
			return
		}
		r.a.count(func(s *Stats) { s.Written++ })
		b.record(u, agreed, true)
	})
}

// wins reports whether the workspace's version wins a conflict.
func wins(conflict policy.Conflict, contactAt time.Time, rec *connector.Record) bool {
	switch conflict {
	case policy.WorkspaceWins:
		return true
	case policy.CRMWins:
		return false
	}
	// newest-wins: a record without a change time loses.
	return rec == nil || rec.UpdatedAt.IsZero() || !contactAt.Before(rec.UpdatedAt)
}

// record queues the link holding the newly agreed values and the
// acknowledgement of the contact's events.
func (b *batch) record(u *update, agreed mapping.Fields, wrote bool) {
	t := b.t
	fwd := forwardSet(t.Mapper)
	l := *u.g.link
	l.Fields = map[string]string{}
	rev := map[string]string{}
	for k, v := range agreed {
		switch {
		case v == "":
		case fwd[k]:
			l.Fields[k] = v
		default:
			rev[k] = v
		}
	}
	l.RecordID = u.recordID
	l.ItemIDs = mapping.ItemIDs(u.g.contact)
	l.WorkspaceHash = mapping.Fields(l.Fields).Hash()
	l.SourceHash = l.WorkspaceHash
	l.ContactUpdatedAt = u.g.contact.UpdatedAt
	if wrote {
		l.SourceWrittenAt = b.r.a.opts.Now()
	}
	if u.g.attempts > 0 {
		_ = b.r.a.opts.Store.ClearDeadLetter(t.Name, opWriteBack, u.g.contactID)
	}
	b.r.commit.Links = append(b.r.commit.Links, state.ReverseLink{Link: l, Agreed: rev})
	b.r.ack(u.g)
}

// planDeletes follows onWorkspaceDelete for linked contacts deleted in
// the workspace.
func (b *batch) planDeletes(groups []*group) {
	t, r := b.t, b.r
	for _, g := range groups {
		switch {
		case t.OnWorkspaceDelete == policy.DeleteUnlink || (t.OnWorkspaceDelete == policy.DeleteRemove && t.Writer == nil):
			r.commit.Unlink = append(r.commit.Unlink, *g.link)
			r.a.count(func(s *Stats) { s.Unlinked++ })
			r.ack(g)
		case t.OnWorkspaceDelete == policy.DeleteRemove:
			id := g.link.RecordID
			if id == "" {
				if _, err := t.Mapper.ExternalID(connector.Record{ID: g.link.ExternalID}); err == nil {
					id = g.link.ExternalID
				}
			}
			if id == "" {
				r.failed(t, g, opDelete, errors.New("the link holds no record id; delete the record by hand"), true)
				continue
			}
			b.add(connector.Change{Op: connector.OpDelete, ID: id, Soft: t.SoftDelete}, func(res connector.WriteResult) {
				if res.Err != nil && !errors.Is(res.Err, connector.ErrNotFound) {
					r.failed(t, g, opDelete, res.Err, false)
					return
				}
				r.commit.Unlink = append(r.commit.Unlink, *g.link)
				r.a.count(func(s *Stats) { s.Deleted++ })
				r.ack(g)
			})
		default:
			r.a.count(func(s *Stats) { s.Ignored++ })
			r.ack(g)
		}
	}
}

// forwardSet is the set of targets Link.Fields may hold: those flowing
// to the workspace, and the sourceUrl pseudo-field.
func forwardSet(m *mapping.Mapper) map[string]bool {
	set := map[string]bool{sourceURLKey: true}
	for _, k := range m.ForwardTargets() {
		set[k] = true
	}
	return set
}

func copyFields(f mapping.Fields) mapping.Fields {
	out := make(mapping.Fields, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}
