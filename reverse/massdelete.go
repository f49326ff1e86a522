package reverse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// The mass-delete guard of the write-back, the same as the forward
// direction's: the record deletions onWorkspaceDelete: delete makes for
// a connector within DeleteWindow may reach Target.MassDeleteThreshold of
// its links, no more. A round whose deletions would go over it holds
// them, and every later one while any is held, as a plan in the state
// file (state.HeldDelete; the events are acknowledged, the links kept),
// and logs a warning naming the figures. An operator lists the plan and
// approves it (ApproveHeldDeletes: the records are deleted, in one Write
// call per chunk, and their links dropped) or drops it
// (DropHeldDeletes: the records stay; their links go, so the forward
// direction creates their contacts again when it next reads them, at
// once with a resync). `syncd deletes` and the admin API do both.

// DeleteWindow is the span over which a connector's write-back deletions
// count against its massDeleteThreshold.
const DeleteWindow = time.Hour

// approveChunk is how many held deletions one Write call carries.
const approveChunk = 100

// recentDeletes returns the record deletions of the connector within
// DeleteWindow, forgetting older ones.
func (a *Applier) recentDeletes(conn string, now time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	ts := a.deletes[conn]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) > DeleteWindow {
		i++
	}
	a.deletes[conn] = ts[i:]
	return len(ts) - i
}

func (a *Applier) noteDeletes(conn string, n int, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for range n {
		a.deletes[conn] = append(a.deletes[conn], now)
	}
}

// guardDeletes returns the deletions of a round that may be written; the
// others are held (see above) and their events acknowledged.
func (b *batch) guardDeletes(dels []*group) ([]*group, error) {
	t, r := b.t, b.r
	a := r.a
	if len(dels) == 0 || t.AllowMassDelete || t.MassDeleteThreshold >= 1 {
		return dels, nil
	}
	var orphans []*group // syncd's own records (orphan.go): not counted
	dels = slices.DeleteFunc(slices.Clone(dels), func(g *group) bool {
		if g.orphan {
			orphans = append(orphans, g)
		}
		return g.orphan
	})
	if len(dels) == 0 {
		return orphans, nil
	}
	st := a.opts.Store
	held, err := st.HeldDeletes.Count(t.Name)
	if err != nil {
		return nil, err
	}
	linked, err := st.Links.Count(t.Name)
	if err != nil {
		return nil, err
	}
	threshold := t.MassDeleteThreshold
	if threshold <= 0 {
		threshold = 0.10
	}
	now := a.opts.Now()
	recent := a.recentDeletes(t.Name, now)
	if held == 0 && float64(recent+len(dels)) <= threshold*float64(linked) {
		a.noteDeletes(t.Name, len(dels), now)
		return append(dels, orphans...), nil
	}
	hold := make([]state.HeldDelete, len(dels))
	for i, g := range dels {
		hold[i] = state.HeldDelete{Connector: t.Name, ContactID: g.contactID, ExternalID: g.link.ExternalID, RecordID: deleteID(t, g), HeldAt: now}
	}
	if err := st.HeldDeletes.Put(hold); err != nil {
		return nil, err
	}
	for _, g := range dels {
		r.ack(g)
	}
	a.count(func(s *Stats) { s.HeldDeletes += int64(len(dels)) })
	a.log.WithFields(map[string]any{logfield.Connector: t.Name, logfield.Held: held + len(dels), logfield.DeletedWithinWindow: recent,
		logfield.Linked: linked, logfield.Threshold: threshold}).
		Warn("contacts deleted in the workspace over massDeleteThreshold: their records' deletions are held; approve with `syncd deletes approve` or drop with `syncd deletes drop`")
	return orphans, nil
}

// ErrNoHeldDeletes is returned when a connector has no held deletion.
var ErrNoHeldDeletes = errors.New("no held deletes")

// HeldDeletes lists the connector's held deletions.
func (a *Applier) HeldDeletes(conn string) ([]state.HeldDelete, error) {
	return a.opts.Store.HeldDeletes.List(conn)
}

// ApproveHeldDeletes deletes the records of the connector's held
// deletions whose link still holds the deleted contact, drops their links
// and forgets the plan. It returns how many records were deleted (or were
// gone already). A record whose delete fails stays held.
func (a *Applier) ApproveHeldDeletes(ctx context.Context, conn string) (int, error) {
	t, ok := a.targets[conn]
	if !ok {
		return 0, fmt.Errorf("connector %q does not write back", conn)
	}
	if t.Writer == nil {
		return 0, fmt.Errorf("connector %s: read-only, no record can be deleted", conn)
	}
	if t.Lock != nil {
		t.Lock.Lock()
		defer t.Lock.Unlock()
	}
	st := a.opts.Store
	held, err := st.HeldDeletes.List(conn)
	if err != nil {
		return 0, err
	}
	if len(held) == 0 {
		return 0, fmt.Errorf("connector %s: %w", conn, ErrNoHeldDeletes)
	}
	done := 0
	var errs []error
	for start := 0; start < len(held); start += approveChunk {
		chunk := held[start:min(start+approveChunk, len(held))]
		var changes []connector.Change
		var links []state.Link
		var forget []string
		for _, h := range chunk {
			l, ok, err := st.Links.ByContact(conn, h.ContactID)
			if err != nil {
				return done, err
			}
			if !ok || h.RecordID == "" {
				forget = append(forget, h.ContactID) // relinked or gone since: nothing to delete
				continue
			}
			changes = append(changes, connector.Change{Op: connector.OpDelete, ID: h.RecordID, Soft: t.SoftDelete})
			links = append(links, l)
		}
		if len(changes) > 0 {
			res, err := t.Writer.Write(ctx, changes)
			if err == nil && len(res) != len(changes) {
				err = fmt.Errorf("writer returned %d results for %d changes", len(res), len(changes))
			}
			if err != nil {
				return done, errors.Join(append(errs, fmt.Errorf("delete %d held records: %w", len(changes), err))...)
			}
			var unlink []state.Link
			for i, wr := range res {
				if wr.Err != nil && !errors.Is(wr.Err, connector.ErrNotFound) {
					errs = append(errs, fmt.Errorf("delete record %s: %w", changes[i].ID, wr.Err))
					continue
				}
				unlink = append(unlink, links[i])
				forget = append(forget, links[i].ContactID)
			}
			if err := st.Reverse.Commit(state.ReverseCommit{Unlink: unlink}); err != nil {
				return done, fmt.Errorf("drop links of deleted records: %w", err)
			}
			done += len(unlink)
			a.count(func(s *Stats) { s.Deleted += int64(len(unlink)) })
		}
		if err := st.HeldDeletes.Drop(conn, forget); err != nil {
			return done, err
		}
	}
	a.log.WithFields(map[string]any{logfield.Connector: conn, logfield.Deleted: done, logfield.Failed: len(errs)}).Warn("held deletes approved by an operator")
	return done, errors.Join(errs...)
}

// DropHeldDeletes forgets the connector's held deletions: their records
// stay, and their links (to contacts deleted in the workspace) go, so that
// the forward direction creates the contacts again when it next reads the
// records. It returns how many were dropped.
func (a *Applier) DropHeldDeletes(conn string) (int, error) {
	t, ok := a.targets[conn]
	if ok && t.Lock != nil {
		t.Lock.Lock()
		defer t.Lock.Unlock()
	}
	st := a.opts.Store
	held, err := st.HeldDeletes.List(conn)
	if err != nil {
		return 0, err
	}
	if len(held) == 0 {
		return 0, fmt.Errorf("connector %s: %w", conn, ErrNoHeldDeletes)
	}
	var unlink []state.Link
	ids := make([]string, len(held))
	for i, h := range held {
		ids[i] = h.ContactID
		l, ok, err := st.Links.ByContact(conn, h.ContactID)
		if err != nil {
			return 0, err
		}
		if ok {
			unlink = append(unlink, l)
		}
	}
	if err := st.Reverse.Commit(state.ReverseCommit{Unlink: unlink}); err != nil {
		return 0, fmt.Errorf("drop links of held deletes: %w", err)
	}
	if err := st.HeldDeletes.Drop(conn, ids); err != nil {
		return 0, err
	}
	a.log.WithFields(map[string]any{logfield.Connector: conn, logfield.Dropped: len(held)}).Warn("held deletes dropped by an operator; the records stay")
	return len(held), nil
}
