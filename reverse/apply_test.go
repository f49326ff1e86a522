package reverse

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
)

// patches counts the workspace PATCHes the emulator received (syncd's,
// not the app's).
func (e *env) patches() int {
	return e.emu.Stats().Requests["PATCH /v1/contacts/{id}"]
}

func TestAppEditReachesRecordThenForwardIsQuiet(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(3)
	e.listen()
	c := e.contact("2")
	edited := e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Changed")}})
	e.waitInbox(1)
	read := e.mem.get("2").UpdatedAt
	e.drain()

	calls, changes := e.mem.writes()
	// The update holds only if the record is still as read.
	want := []connector.Change{{Op: connector.OpUpdate, ID: "2", Fields: map[string]any{"last_name": "Changed"}, IfUnchangedSince: read}}
	if calls != 1 || !reflect.DeepEqual(changes, want) {
		t.Fatalf("writes: %d calls %+v, want one call %+v", calls, changes, want)
	}
	if got := e.mem.get("2").Fields["last_name"]; got != "Changed" {
		t.Fatalf("record last_name = %v", got)
	}
	l := e.link("2")
	if l.Fields["lastName"] != "Changed" || !l.ContactUpdatedAt.Equal(edited.UpdatedAt) || l.WorkspaceHash != l.SourceHash {
		t.Fatalf("link after write-back: %+v", l)
	}
	if n, _ := e.store.Inbox.Count(); n != 0 {
		t.Fatalf("%d events left in the inbox", n)
	}
	// The forward pass reads the changed record and writes nothing.
	before := e.patches()
	if sum := e.forward(); sum.Updated != 0 || sum.Created != 0 || e.patches() != before {
		t.Fatalf("forward pass after a write-back: %v, %d PATCHes", sum, e.patches()-before)
	}
}

func TestForwardEchoWritesNothing(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(3)
	e.listen()
	e.mem.put("1", map[string]any{"last_name": "FromCRM"})
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want 1 update", sum)
	}
	e.waitInbox(1)
	e.drain()
	if calls, _ := e.mem.writes(); calls != 0 {
		t.Fatalf("the echo of a forward write caused %d writes", calls)
	}
	if st := e.applier.Stats(); st.Echoes+st.Stale != 1 || st.Events != 1 {
		t.Fatalf("stats %+v, want the event dropped as an echo", st)
	}
}

// TestEchoBeforeForwardRecordsItsLink applies the echo of a forward write
// before the forward pass stored its link: the record already holds the
// values, so nothing is written and the link catches up.
func TestEchoBeforeForwardRecordsItsLink(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(2)
	old := e.link("1")
	e.mem.put("1", map[string]any{"last_name": "FromCRM"})
	e.forward()
	if err := e.store.Links.Put(old); err != nil { // as if forward had not saved it yet
		t.Fatal(err)
	}
	c := e.contact("1")
	e.event("ev1", workspace.EventContactUpdated, c)
	e.drain()
	if calls, _ := e.mem.writes(); calls != 0 {
		t.Fatalf("%d writes, want none: the record holds the values", calls)
	}
	l := e.link("1")
	if st := e.applier.Stats(); st.Unchanged != 1 || l.Fields["lastName"] != "FromCRM" || !l.ContactUpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("stats %+v link %+v", st, l)
	}
}

func TestVersionsApplyInUpdatedAtOrder(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	c := e.contact("1")
	v := func(name string, d time.Duration) workspace.Contact {
		x := c
		x.DefaultFields.LastName = ptr(name)
		x.UpdatedAt = c.UpdatedAt.Add(d)
		return x
	}
	// Same round, newest first: only the newest is written.
	e.event("a2", workspace.EventContactUpdated, v("Two", 2*time.Second))
	e.event("a1", workspace.EventContactUpdated, v("One", time.Second))
	e.drain()
	// A later round brings an older version: dropped.
	e.event("a0", workspace.EventContactUpdated, v("Zero", time.Second/2))
	e.drain()
	calls, changes := e.mem.writes()
	if calls != 1 || len(changes) != 1 || changes[0].Fields["last_name"] != "Two" {
		t.Fatalf("writes %d %+v, want the one write of the newest version", calls, changes)
	}
	if got := e.mem.get("1").Fields["last_name"]; got != "Two" {
		t.Fatalf("record holds %v", got)
	}
	if st := e.applier.Stats(); st.Stale != 1 || st.Events != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConflictPolicies(t *testing.T) {
	tests := []struct {
		name          string
		policy        string
		workspaceLate bool // the contact changed after the record
		wantRecord    string
		wantWinner    string
	}{
		{"newest-wins, workspace later", "newest-wins", true, "WS", "workspace"},
		{"newest-wins, record later", "newest-wins", false, "CRM", "mem"},
		{"workspace-wins, record later", "workspace-wins", false, "WS", "workspace"},
		{"crm-wins, workspace later", "crm-wins", true, "CRM", "mem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.Conflict = policy.Conflict(tt.policy) })
			e.seed(1)
			c := e.contact("1")
			// Both sides change lastName since the last sync.
			e.mem.put("1", map[string]any{"last_name": "CRM"})
			ws := c
			ws.DefaultFields.LastName = ptr("WS")
			ws.UpdatedAt = c.UpdatedAt.Add(time.Minute)
			if tt.workspaceLate {
				e.mem.setUpdatedAt("1", c.UpdatedAt.Add(time.Second))
			} else {
				e.mem.setUpdatedAt("1", c.UpdatedAt.Add(time.Hour))
			}
			e.event("ev", workspace.EventContactUpdated, ws)
			e.drain()
			if got := e.mem.get("1").Fields["last_name"]; got != tt.wantRecord {
				t.Fatalf("record holds %v, want %s", got, tt.wantRecord)
			}
			cs, err := e.store.Conflicts.List("mem", 0)
			if err != nil || len(cs) != 1 {
				t.Fatalf("conflicts %+v %v, want 1", cs, err)
			}
			if cs[0].Winner != tt.wantWinner || cs[0].Policy != tt.policy || cs[0].Workspace["lastName"] != "WS" || cs[0].Source["lastName"] != "CRM" {
				t.Fatalf("conflict %+v", cs[0])
			}
			// The record's side wins through the forward pass.
			if tt.wantRecord == "CRM" {
				e.forward()
				if got := *e.contact("1").DefaultFields.LastName; got != "CRM" {
					t.Fatalf("after the forward pass the contact holds %s, want CRM", got)
				}
			}
		})
	}
}

func TestDisjointChangesMergeWithoutConflict(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	c := e.contact("1")
	e.mem.put("1", map[string]any{"email": "new@example.com"})
	ws := c
	ws.DefaultFields.LastName = ptr("WS")
	ws.UpdatedAt = c.UpdatedAt.Add(time.Minute)
	e.event("ev", workspace.EventContactUpdated, ws)
	e.drain()
	_, changes := e.mem.writes()
	if len(changes) != 1 || !reflect.DeepEqual(changes[0].Fields, map[string]any{"last_name": "WS"}) {
		t.Fatalf("changes %+v, want only last_name", changes)
	}
	if n, _ := e.store.Conflicts.Count("mem"); n != 0 {
		t.Fatalf("%d conflicts, want none", n)
	}
	// The record's own change still flows forward.
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v, want the e-mail change", sum)
	}
	got := e.contact("1")
	if got.DefaultFields.Emails[0].Value != "new@example.com" {
		t.Fatalf("contact e-mails %+v", got.DefaultFields.Emails)
	}
}

func TestReverseOnlyFieldIsAgreedAndNotRewritten(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	e.listen()
	c := e.contact("1")
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Role: workspace.Some("CEO")}})
	e.waitInbox(1)
	e.drain()
	if got := e.mem.get("1").Fields["title"]; got != "CEO" {
		t.Fatalf("record title = %v", got)
	}
	if agreed, _ := e.store.Reverse.Agreed("mem", c.ID); agreed["role"] != "CEO" {
		t.Fatalf("reverse-only values %v", agreed)
	}
	// An unrelated forward change echoes back: role is not written again.
	e.mem.put("1", map[string]any{"first_name": "Renamed"})
	e.forward()
	e.waitInbox(1)
	e.drain()
	if calls, _ := e.mem.writes(); calls != 1 {
		t.Fatalf("%d write calls, want only the first", calls)
	}
}

func TestDeletePolicies(t *testing.T) {
	tests := []struct {
		policy      string
		soft        bool
		wantLink    bool
		wantRecord  bool
		wantDeleted bool
	}{
		{policy: "ignore", wantLink: true, wantRecord: true},
		{policy: "unlink", wantRecord: true},
		{policy: "delete", soft: true, wantRecord: true, wantDeleted: true},
		{policy: "delete"},
	}
	for _, tt := range tests {
		name := tt.policy
		if tt.soft {
			name += " soft"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(tg *Target) { tg.OnWorkspaceDelete, tg.SoftDelete = policy.Delete(tt.policy), tt.soft })
			e.seed(20) // one deletion is 5% of the links: under the mass-delete guard's 10%
			e.listen()
			c := e.contact("1")
			emutest.NewApp(t, e.emu.URL).Delete(c.ID)
			e.waitInbox(1)
			e.drain()
			_, linked, _ := e.store.Links.ByContact("mem", c.ID)
			rec := e.mem.get("1")
			if linked != tt.wantLink || (rec.ID != "") != tt.wantRecord || rec.Deleted != tt.wantDeleted {
				t.Fatalf("linked %v, record %+v; want linked %v, record %v, deleted %v", linked, rec, tt.wantLink, tt.wantRecord, tt.wantDeleted)
			}
			if e.mem.get("2").ID == "" || e.mem.get("2").Deleted {
				t.Fatal("another record was touched")
			}
		})
	}
}

// TestFailedWritesFollowOneRule: an outage (the Write call fails as a
// whole) counts no attempt; then each kind of failure of the change is
// settled by connector.Dispose: a definite refusal or a missing record is
// one dead letter after one send, naming the field and message; a 5xx or
// an outcome-unknown failure is sent again until MaxAttempts (3) rounds
// failed; a rate limit or a spent budget waits, counting no attempt, and
// is written once it passes.
func TestFailedWritesFollowOneRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		// sends before the contact is settled; deadLetter: how.
		sends      int
		deadLetter bool
		reason     []string
	}{
		{name: "refused", err: errRefused, sends: 1, deadLetter: true, reason: []string{"last_name", "23514", "value refused"}},
		{name: "refused wrapped", err: fmt.Errorf("update 1 in people: %w", errRefused), sends: 1, deadLetter: true, reason: []string{"field last_name refused", "update 1 in people"}},
		{name: "not found", err: fmt.Errorf("record 1: %w", connector.ErrNotFound), sends: 1, deadLetter: true, reason: []string{"record not found"}},
		{name: "5xx", err: &remote.StatusError{API: "crm", Route: "PATCH /people/{id}", Status: 503}, sends: 3, deadLetter: true, reason: []string{"503"}},
		{name: "outcome unknown", err: fmt.Errorf("%w: connection reset", connector.ErrOutcomeUnknown), sends: 3, deadLetter: true},
		{name: "429", err: &remote.StatusError{API: "crm", Route: "PATCH /people/{id}", Status: 429}, sends: 6},
		{name: "budget spent", err: fmt.Errorf("crm daily budget: %w", connector.ErrBudgetSpent), sends: 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.seed(2)
			c := e.contact("1")
			c.DefaultFields.LastName = ptr("X")
			c.UpdatedAt = c.UpdatedAt.Add(time.Second)
			e.event("ev1", workspace.EventContactUpdated, c)

			// The system is down: the call fails as a whole, no attempt counts.
			e.mem.failCall = 1
			if _, err := e.applier.Round(context.Background()); err == nil {
				t.Fatal("a round whose write failed as a whole reported no error")
			}
			evs, _ := e.store.Inbox.Pending(0)
			if len(evs) != 1 || evs[0].Attempts != 0 {
				t.Fatalf("inbox after an outage: %+v", evs)
			}
			_, before := e.mem.writes()
			e.mem.failIDs["1"] = tc.err
			round := func() {
				t.Helper()
				if _, err := e.applier.Round(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if tc.deadLetter {
				for range tc.sends {
					round()
				}
			} else {
				// More failed rounds than MaxAttempts, then the limit
				// passes.
				for range tc.sends - 1 {
					round()
				}
				delete(e.mem.failIDs, "1")
				round()
			}
			round() // settled: a round more sends nothing
			_, after := e.mem.writes()
			if sent := len(after) - len(before); sent != tc.sends {
				t.Fatalf("the change was sent %d times, want %d", sent, tc.sends)
			}
			if n, _ := e.store.Inbox.Count(); n != 0 {
				t.Fatalf("%d events left", n)
			}
			dls, err := e.store.DeadLetters.List("mem")
			if err != nil {
				t.Fatal(err)
			}
			if !tc.deadLetter {
				if len(dls) != 0 || e.mem.get("1").Fields["last_name"] != "X" || e.link("1").Fields["lastName"] != "X" {
					t.Fatalf("dead letters %+v, record %+v: want the change written once the limit passed", dls, e.mem.get("1"))
				}
				return
			}
			if len(dls) != 1 || dls[0].Operation != opWriteBack || dls[0].Key != c.ID {
				t.Fatalf("dead letters %+v, want one for the contact", dls)
			}
			for _, w := range tc.reason {
				if !strings.Contains(dls[0].Reason, w) {
					t.Errorf("dead letter reason %q does not name %q", dls[0].Reason, w)
				}
			}
			if l := e.link("1"); l.Fields["lastName"] == "X" {
				t.Fatal("the link took values that were never written")
			}
		})
	}
}

// errRefused is a refusal under the connector contract, as PostgreSQL's
// check violation.
var errRefused error = &connector.RefusedError{Field: "last_name", Code: "23514", Reason: "value refused"}

// lossyWriter applies writes but loses the answer once: the applier
// cannot know they were applied, as after a crash between the write and
// the state commit.
type lossyWriter struct {
	*memConn
	lose int
}

func (w *lossyWriter) Write(ctx context.Context, ch []connector.Change) ([]connector.WriteResult, error) {
	res, err := w.memConn.Write(ctx, ch)
	if w.lose > 0 {
		w.lose--
		return nil, context.DeadlineExceeded
	}
	return res, err
}

func TestLostWriteAnswerAppliesOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	e.target.Writer = &lossyWriter{memConn: e.mem, lose: 1}
	c := e.contact("1")
	c.DefaultFields.LastName = ptr("Once")
	c.UpdatedAt = c.UpdatedAt.Add(time.Second)
	e.event("ev1", workspace.EventContactUpdated, c)
	if _, err := e.applier.Round(context.Background()); err == nil {
		t.Fatal("lost answer not reported")
	}
	// A restart: the state file is reopened and a new applier drains.
	e.store.Close()
	e.open()
	e.newApplier()
	e.drain()
	_, changes := e.mem.writes()
	if len(changes) != 1 {
		t.Fatalf("%d changes written, want exactly 1: %+v", len(changes), changes)
	}
	if l := e.link("1"); l.Fields["lastName"] != "Once" || !l.ContactUpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("link %+v", l)
	}
	if n, _ := e.store.Inbox.Count(); n != 0 {
		t.Fatalf("%d events left", n)
	}
}

func TestCatchUpFindsEditsMadeWhileAway(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(3)
	c := e.contact("2")
	// No subscription: the edit's webhook goes nowhere.
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("Offline")}})
	n, err := e.applier.CatchUp(context.Background(), "mem")
	if err != nil || n != 1 {
		t.Fatalf("catch-up enqueued %d, %v; want 1", n, err)
	}
	if n, _ := e.applier.CatchUp(context.Background(), "mem"); n != 0 {
		t.Fatalf("a second catch-up enqueued %d", n)
	}
	e.drain()
	if got := e.mem.get("2").Fields["last_name"]; got != "Offline" {
		t.Fatalf("record holds %v", got)
	}
	if n, _ := e.applier.CatchUp(context.Background(), "mem"); n != 0 {
		t.Fatalf("catch-up after applying enqueued %d", n)
	}
	if _, err := e.applier.CatchUp(context.Background(), "nope"); err == nil {
		t.Fatal("catch-up of an unknown connector succeeded")
	}
}

// TestForwardEchoCarriesUntouchedWorkspaceEdits: a workspace edit whose
// event is still waiting when a forward pass patches another field of the
// contact. The edit's own event is then older than the forward write and
// dropped, but the forward write's echo carries the whole contact, edit
// included, and brings it to the record.
func TestForwardEchoCarriesUntouchedWorkspaceEdits(t *testing.T) {
	e := newEnv(t, nil)
	e.seed(1)
	e.listen()
	c := e.contact("1")
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("InApp")}})
	e.mem.put("1", map[string]any{"email": "crm@example.com"})
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("forward pass %v", sum)
	}
	e.waitInbox(2)
	e.drain()
	rec := e.mem.get("1")
	if rec.Fields["last_name"] != "InApp" || rec.Fields["email"] != "crm@example.com" {
		t.Fatalf("record %+v: want the app's last name and the CRM's e-mail", rec.Fields)
	}
	got := e.contact("1")
	if *got.DefaultFields.LastName != "InApp" || got.DefaultFields.Emails[0].Value != "crm@example.com" {
		t.Fatalf("contact %+v", got.DefaultFields)
	}
	if l := e.link("1"); l.Fields["lastName"] != "InApp" || l.Fields["emails.work"] != "crm@example.com" {
		t.Fatalf("link %+v", l.Fields)
	}
}

func TestRecordEditedWhileDecidingIsNotOverwritten(t *testing.T) {
	e := newEnv(t, nil) // newest-wins
	e.seed(1)
	c := e.contact("1")
	ws := c
	ws.DefaultFields.LastName = ptr("WS")
	ws.UpdatedAt = c.UpdatedAt.Add(time.Minute)
	// The record is edited after the applier read it, before it writes,
	// and later than the contact: the table's edit is the newest.
	e.mem.beforeWrite = func() {
		e.mem.beforeWrite = nil
		e.mem.put("1", map[string]any{"last_name": "CRM"})
		e.mem.setUpdatedAt("1", ws.UpdatedAt.Add(time.Second))
	}
	e.event("ev", workspace.EventContactUpdated, ws)
	res, err := e.applier.Round(context.Background())
	if err != nil || res.Retry != 1 || res.Acked != 0 {
		t.Fatalf("round %+v %v, want the event left to retry", res, err)
	}
	if got := e.mem.get("1").Fields["last_name"]; got != "CRM" {
		t.Fatalf("record holds %v after the refused write, want CRM", got)
	}
	// The next round reads the record again: the newer table edit wins.
	e.drain()
	if got := e.mem.get("1").Fields["last_name"]; got != "CRM" {
		t.Fatalf("record holds %v, want CRM (newest wins)", got)
	}
	if n, _ := e.store.Conflicts.Count("mem"); n != 1 {
		t.Fatalf("%d conflicts, want 1", n)
	}
	if evs, _ := e.store.Inbox.Pending(10); len(evs) != 0 {
		t.Fatalf("%d events left in the inbox", len(evs))
	}
	e.forward()
	if got := *e.contact("1").DefaultFields.LastName; got != "CRM" {
		t.Fatalf("after the forward pass the contact holds %s, want CRM", got)
	}
}
