package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// pipedriveEnv syncs a Pipedrive test server into an emulated workspace.
type pipedriveEnv struct {
	*env
	srv *pipedriveemu.Server
	src connector.Source
	m   *mapping.Mapper
}

func newPipedriveEnv(t *testing.T, pageSize int, opts pipedriveemu.Options, edits ...func(*pipedrive.Settings)) *pipedriveEnv {
	t.Helper()
	e := &pipedriveEnv{env: newEnv(t, 0, emulator.Options{})}
	e.srv = pipedriveemu.NewServer(opts)
	t.Cleanup(e.srv.Close)
	e.srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	m, err := mapping.Compile(mapping.Spec{Fields: map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"},
		"emails.work": {From: "emails.work"}, "phoneNumbers.mobile": {From: "phones.mobile", Transform: []string{"e164"}, Region: "US"},
	}}, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	set := pipedrive.NewSettings()
	set.APIToken, set.BaseURL, set.RateLimit, set.PageSize, set.Lookback = connector.Secret(e.srv.Token()), e.srv.URL, 100000, pageSize, 0
	for _, edit := range edits {
		edit(set)
	}
	src, err := pipedrive.Open(context.Background(), connector.Options{Name: "pd", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	src.SetClock(e.srv.Now)
	t.Cleanup(func() { src.Close() })
	e.src = src
	return e
}

func (e *pipedriveEnv) run() Summary {
	e.t.Helper()
	sum, err := e.try()
	if err != nil {
		e.t.Fatalf("run: %v (summary %v)", err, sum)
	}
	return sum
}

// try runs one pass and returns its error.
func (e *pipedriveEnv) try() (Summary, error) {
	e.t.Helper()
	typ, _ := connector.Lookup(pipedrive.TypeName)
	r, err := New(Options{
		Connector: "pd", Source: "custom-pipedrive", Type: typ, Reader: e.src, Mapper: e.m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, OnSourceDelete: e.policy, AllowMassDelete: true,
		Backoff: time.Millisecond, MaxAttempts: 6, Log: quietLog(),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.Run(context.Background())
}

// contactsByExt returns the workspace contacts of the connector by
// externalId.
func (e *pipedriveEnv) contactsByExt() map[string][]workspace.Contact {
	out := map[string][]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		if c.Source != nil && *c.Source == "custom-pipedrive" && c.ExternalID != nil {
			out[*c.ExternalID] = append(out[*c.ExternalID], c)
		}
	}
	return out
}

func person(i int) pipedriveemu.Person {
	return pipedriveemu.Person{
		Name:   fmt.Sprintf("First%d Last%d", i, i),
		Emails: []pipedriveemu.Item{{Value: fmt.Sprintf("p%d@example.com", i), Label: "work"}},
		Phones: []pipedriveemu.Item{{Value: fmt.Sprintf("+1415%07d", 2000000+i), Label: "mobile"}},
	}
}

// TestPipedriveSharedUpdateTimeAllLinked: 2,000 persons (or
// SYNCD_PIPEDRIVE_PERSONS, e.g. the 20,000), 15% of them sharing
// one update_time across page boundaries, become as many linked
// contacts, none twice; a second pass changes nothing.
func TestPipedriveSharedUpdateTimeAllLinked(t *testing.T) {
	total := 2000
	if v := os.Getenv("SYNCD_PIPEDRIVE_PERSONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			t.Fatalf("SYNCD_PIPEDRIVE_PERSONS=%q: want a number of persons, at least 100", v)
		}
		total = n
	}
	shared, from, pageSize := 3*total/20, total*87/200, min(pipedrive.MaxPageSize, total/20)
	e := newPipedriveEnv(t, pageSize, pipedriveemu.Options{})
	for i := range total {
		if i < from || i >= from+shared {
			e.srv.Advance(time.Second)
		}
		e.srv.Add(person(i))
	}
	e.srv.Advance(time.Second)
	start := time.Now()
	if sum := e.run(); sum.Created != total || sum.Failed != 0 {
		t.Fatalf("first pass %v, want %d created", sum, total)
	}
	t.Logf("%d persons (%d on one update_time, pages of %d): first pass %s, %d list calls", total, shared, pageSize,
		time.Since(start).Round(time.Millisecond), e.srv.Stats().Requests[pipedriveemu.RouteListPersons])
	byExt := e.contactsByExt()
	if len(byExt) != total {
		t.Errorf("%d externalIds in the workspace, want %d", len(byExt), total)
	}
	for ext, cs := range byExt {
		if len(cs) != 1 {
			t.Errorf("person %s has %d contacts", ext, len(cs))
		}
	}
	if n, _ := e.store.Links.Count("pd"); n != total {
		t.Errorf("%d links, want %d", n, total)
	}
	if sum := e.run(); sum.Created+sum.Updated+sum.Deleted != 0 {
		t.Errorf("second pass with nothing changed: %v", sum)
	}
}

// TestPipedriveDeleteAndMerge: with onSourceDelete delete, a person
// deleted in Pipedrive loses its contact in the next pass; a person
// merged into one that has no contact yet hands its contact over (the
// contact's externalId becomes the survivor's, its values the
// survivor's), and one merged into a person with a contact is a
// duplicate, deleted.
func TestPipedriveDeleteAndMerge(t *testing.T) {
	e := newPipedriveEnv(t, 10, pipedriveemu.Options{})
	e.policy = policy.DeleteRemove
	ids := make([]string, 4)
	for i := range ids {
		e.srv.Advance(time.Second)
		ids[i] = e.srv.Add(person(i))
	}
	e.srv.Advance(time.Second)
	if sum := e.run(); sum.Created != 4 {
		t.Fatalf("first pass %v", sum)
	}
	before := e.contactsByExt()

	e.srv.Advance(time.Second)
	late := e.srv.Add(person(10)) // made after the pass: no contact yet
	if err := e.srv.Delete(ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Merge(ids[1], late); err != nil { // into a person without a contact
		t.Fatal(err)
	}
	if err := e.srv.Merge(ids[2], ids[3]); err != nil { // into a person with one
		t.Fatal(err)
	}
	e.srv.Advance(time.Second)
	sum := e.run()
	after := e.contactsByExt()
	if len(after[ids[0]]) != 0 || len(after[ids[2]]) != 0 {
		t.Errorf("contacts of the deleted person and of the duplicate merged away: %d, %d; want none", len(after[ids[0]]), len(after[ids[2]]))
	}
	moved := after[late]
	if len(moved) != 1 || moved[0].ID != before[ids[1]][0].ID {
		t.Fatalf("survivor %s has contacts %+v, want the merged person's contact %s", late, moved, before[ids[1]][0].ID)
	}
	if got := deref(moved[0].DefaultFields.FirstName); got != "First10" {
		t.Errorf("relinked contact's first name %q, want the survivor's First10", got)
	}
	if sum.Created != 0 || sum.Deleted != 2 || sum.Relinked != 1 {
		t.Errorf("pass %v, want 0 created, 2 deleted, 1 relinked", sum)
	}
	if len(after) != 2 {
		t.Errorf("%d contacts left, want 2 (%s, %s)", len(after), ids[3], late)
	}
}

// TestPipedriveDailyBudget: a pass that meets the company's spent daily
// token budget stops (Stopped budget) keeping what it recorded; the
// next day's pass reads on from there, each person once.
func TestPipedriveDailyBudget(t *testing.T) {
	const total = 500
	// 20 tokens a list page: 4 pages of 100 fit in 80.
	e := newPipedriveEnv(t, 100, pipedriveemu.Options{DailyTokens: 80, BurstLimit: 1000})
	for i := range total {
		e.srv.Advance(time.Second)
		e.srv.Add(person(i))
	}
	e.srv.Advance(time.Second)
	sum, err := e.try()
	if !errors.Is(err, connector.ErrBudgetSpent) || sum.Stopped != state.StoppedBudget {
		t.Fatalf("first pass: %v, %v; want it stopped at the budget", sum, err)
	}
	if sum.Created != 400 {
		t.Errorf("first pass created %d, want the 400 of the pages read", sum.Created)
	}
	e.srv.NewDay()
	reads := e.srv.Stats().Requests[pipedriveemu.RouteListPersons]
	if sum := e.run(); sum.Created != total-400 || sum.Stopped != "" {
		t.Errorf("next day's pass %v, want %d created", sum, total-400)
	}
	if got := e.srv.Stats().Requests[pipedriveemu.RouteListPersons] - reads; got != 1 {
		t.Errorf("the next day's pass made %d list calls, want 1 (the one page left)", got)
	}
	byExt := e.contactsByExt()
	if len(byExt) != total {
		t.Errorf("%d contacts, want %d", len(byExt), total)
	}
}

// TestPipedriveDeletionsWithoutRecents: with a recents feed that shows no
// deleted person and no merge trace (Pipedrive does not document either),
// the id scan still finds them: with onSourceDelete delete, a person
// deleted in Pipedrive loses its contact, and a person merged into one
// that has a contact leaves that one contact for the survivor.
func TestPipedriveDeletionsWithoutRecents(t *testing.T) {
	e := newPipedriveEnv(t, 10, pipedriveemu.Options{RecentsOmitDeleted: true}, func(s *pipedrive.Settings) { s.IDScanInterval = 0 })
	e.policy = policy.DeleteRemove
	ids := make([]string, 4)
	for i := range ids {
		e.srv.Advance(time.Second)
		ids[i] = e.srv.Add(person(i))
	}
	e.srv.Advance(time.Second)
	if sum := e.run(); sum.Created != 4 {
		t.Fatalf("first pass %v", sum)
	}
	before := e.contactsByExt()
	e.srv.Advance(time.Second)
	if err := e.srv.Delete(ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Merge(ids[1], ids[2]); err != nil {
		t.Fatal(err)
	}
	e.srv.Advance(time.Second)
	if err := e.srv.Edit(ids[2], func(p *pipedriveemu.Person) { p.OwnerID = 7 }); err != nil { // the edit clears merge_what_id
		t.Fatal(err)
	}
	e.srv.Advance(time.Second)
	sum := e.run()
	after := e.contactsByExt()
	if len(after[ids[0]]) != 0 || len(after[ids[1]]) != 0 {
		t.Errorf("contacts of the deleted and the merged-away person: %d, %d; want none", len(after[ids[0]]), len(after[ids[1]]))
	}
	if got := after[ids[2]]; len(got) != 1 || got[0].ID != before[ids[2]][0].ID {
		t.Errorf("survivor %s has contacts %+v, want its own one", ids[2], got)
	}
	if sum.Deleted != 2 || sum.Created != 0 || len(after) != 2 {
		t.Errorf("pass %v, %d contacts; want 2 deleted, none created, 2 left", sum, len(after))
	}
}

// TestPipedriveMergeWithoutTrace: a person merged, with no merge_what_id
// left in the recents feed, into a person that has no contact yet ends
// with one contact, the merged person's (its externalId now the
// survivor's), not a delete and a new contact: the merged person is found
// gone (in the feed, or by the id scan when the feed does not show it),
// and the survivor holds its e-mail address.
func TestPipedriveMergeWithoutTrace(t *testing.T) {
	tests := []struct {
		name string
		opts pipedriveemu.Options
	}{
		{name: "the feed shows the merged person inactive"},
		{name: "the feed shows nothing: the id scan", opts: pipedriveemu.Options{RecentsOmitDeleted: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPipedriveEnv(t, 10, tt.opts, func(s *pipedrive.Settings) { s.IDScanInterval = 0 })
			e.policy = policy.DeleteRemove
			e.srv.Advance(time.Second)
			loser := e.srv.Add(person(1))
			e.srv.Add(person(2))
			e.srv.Advance(time.Second)
			if sum := e.run(); sum.Created != 2 {
				t.Fatalf("first pass %v", sum)
			}
			contact := e.contactsByExt()[loser][0].ID
			e.srv.Advance(time.Second)
			survivor := e.srv.Add(pipedriveemu.Person{Name: "First1 Married"}) // made after the pass: no contact
			if err := e.srv.Merge(loser, survivor); err != nil {
				t.Fatal(err)
			}
			e.srv.Advance(time.Second)
			if err := e.srv.Edit(survivor, func(p *pipedriveemu.Person) { p.OwnerID = 7 }); err != nil { // clears merge_what_id
				t.Fatal(err)
			}
			e.srv.Advance(time.Second)
			sum := e.run()
			after := e.contactsByExt()
			got := after[survivor]
			if len(got) != 1 || got[0].ID != contact {
				t.Fatalf("survivor %s has contacts %+v, want the merged person's contact %s", survivor, got, contact)
			}
			if deref(got[0].DefaultFields.LastName) != "Married" {
				t.Errorf("relinked contact's last name %q, want the survivor's", deref(got[0].DefaultFields.LastName))
			}
			if sum.Created != 0 || sum.Deleted != 0 || sum.Relinked != 1 || len(after) != 2 {
				t.Errorf("pass %v, %d contacts; want 1 relinked, none created or deleted, 2 contacts", sum, len(after))
			}
		})
	}
}
