package reverse

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedrivetest"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// TestPipedriveEditsKeepUnmappedItems: workspace edits of the work e-mail
// reach Pipedrive with each person's home address (which syncd does not
// map) kept, one read of the persons and one PATCH each; the forward pass
// that follows recognises its own writes.
func TestPipedriveEditsKeepUnmappedItems(t *testing.T) {
	const n = 30
	srv := pipedrivetest.NewServer(pipedrivetest.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	for i := range n {
		srv.Add(pipedrivetest.Person{Name: fmt.Sprintf("First%d Last%d", i, i), Emails: []pipedrivetest.Item{
			{Value: fmt.Sprintf("p%d@work.example", i), Label: "work"}, {Value: fmt.Sprintf("p%d@home.example", i), Label: "home"},
		}})
	}
	srv.Advance(time.Second)

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "emails.work": {From: "emails.work"},
	})
	set := pipedrive.NewSettings()
	set.APIToken, set.BaseURL, set.RateLimit, set.Lookback = connector.Secret(srv.Token()), srv.URL, 100000, 0
	src, err := pipedrive.Open(context.Background(), connector.Options{Name: "pd", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	src.SetClock(srv.Now)
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, pipedrive.TypeName, src, &Target{
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both}, n)
	a := crm.applier

	for _, c := range e.emu.Contacts() {
		v := "new." + c.DefaultFields.Emails[0].Value
		e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Emails: []workspace.ItemPatch{
			{ID: c.DefaultFields.Emails[0].ID, Name: c.DefaultFields.Emails[0].Name, Value: &v}}}})
	}
	srv.Advance(time.Second)
	if q, err := a.CatchUp(context.Background(), "pd"); err != nil || q != n {
		t.Fatalf("catch-up queued %d, %v", q, err)
	}
	before := srv.Stats()
	if err := a.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := srv.Stats()
	patches := after.Requests[pipedrivetest.RouteUpdatePerson] - before.Requests[pipedrivetest.RouteUpdatePerson]
	reads := after.Requests[pipedrivetest.RouteListPersons] - before.Requests[pipedrivetest.RouteListPersons]
	if patches != n || reads > 2 {
		t.Errorf("%d PATCH and %d list calls for %d edits, want %d and at most 2", patches, reads, n, n)
	}
	for _, p := range srv.Persons() {
		if len(p.Emails) != 2 || !strings.HasPrefix(p.Emails[0].Value, "new.") || p.Emails[0].Label != "work" ||
			p.Emails[1].Label != "home" || !strings.HasSuffix(p.Emails[1].Value, "@home.example") {
			t.Errorf("person %s e-mails %+v: want the new work address and the home one kept", p.ID, p.Emails)
		}
	}
	srv.Advance(time.Second)
	wsPatches := e.patches()
	if sum := crm.forward(); sum.Updated != 0 || sum.Unchanged < n || e.patches() != wsPatches {
		t.Errorf("forward pass after the write-back: %v, %d workspace PATCHes; want syncd's own writes recognised", sum, e.patches()-wsPatches)
	}
}

// TestPipedriveWriteBackMilliseconds: persons whose update_time has
// milliseconds (API v2) take workspace edits on the first drain: the
// write-back's check of the update_time read compares milliseconds, so a
// person read in the second of its last edit is not "changed since
// read" and put off forever.
func TestPipedriveWriteBackMilliseconds(t *testing.T) {
	const n = 5
	srv := pipedrivetest.NewServer(pipedrivetest.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 400e6, time.UTC))
	for i := range n {
		srv.Add(pipedrivetest.Person{Name: fmt.Sprintf("First%d Last%d", i, i), Emails: []pipedrivetest.Item{{Value: fmt.Sprintf("p%d@work.example", i), Label: "work"}}})
	}
	srv.Advance(time.Second)

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "emails.work": {From: "emails.work"},
	})
	set := pipedrive.NewSettings()
	set.APIToken, set.BaseURL, set.RateLimit, set.Lookback = connector.Secret(srv.Token()), srv.URL, 100000, 0
	src, err := pipedrive.Open(context.Background(), connector.Options{Name: "pd", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	src.SetClock(srv.Now)
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, pipedrive.TypeName, src, &Target{
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both}, n)
	for _, c := range e.emu.Contacts() {
		v := "new." + c.DefaultFields.Emails[0].Value
		e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Emails: []workspace.ItemPatch{
			{ID: c.DefaultFields.Emails[0].ID, Name: c.DefaultFields.Emails[0].Name, Value: &v}}}})
	}
	if q, err := crm.applier.CatchUp(context.Background(), "pd"); err != nil || q != n {
		t.Fatalf("catch-up queued %d, %v", q, err)
	}
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.Stats().Requests[pipedrivetest.RouteUpdatePerson]; got != n {
		t.Errorf("%d PATCHes after one drain, want %d", got, n)
	}
	for _, p := range srv.Persons() {
		if !strings.HasPrefix(p.Emails[0].Value, "new.") {
			t.Errorf("person %s e-mail %q: the edit was put off", p.ID, p.Emails[0].Value)
		}
	}
}
