package reverse

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestPipedriveEditsKeepUnmappedItems: workspace edits of the work e-mail
// reach Pipedrive with each person's home address (which syncd does not
// map) kept, one read of the persons and one PATCH each; the forward pass
// that follows recognises its own writes.
func TestPipedriveEditsKeepUnmappedItems(t *testing.T) {
	const n = 30
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	for i := range n {
		srv.Add(pipedriveemu.Person{Name: fmt.Sprintf("First%d Last%d", i, i), Emails: []pipedriveemu.Item{
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
	patches := after.Requests[pipedriveemu.RouteUpdatePerson] - before.Requests[pipedriveemu.RouteUpdatePerson]
	reads := after.Requests[pipedriveemu.RouteListPersons] - before.Requests[pipedriveemu.RouteListPersons]
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
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 400e6, time.UTC))
	for i := range n {
		srv.Add(pipedriveemu.Person{Name: fmt.Sprintf("First%d Last%d", i, i), Emails: []pipedriveemu.Item{{Value: fmt.Sprintf("p%d@work.example", i), Label: "work"}}})
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
	if got := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson]; got != n {
		t.Errorf("%d PATCHes after one drain, want %d", got, n)
	}
	for _, p := range srv.Persons() {
		if !strings.HasPrefix(p.Emails[0].Value, "new.") {
			t.Errorf("person %s e-mail %q: the edit was put off", p.ID, p.Emails[0].Value)
		}
	}
}

// TestPipedriveMonetaryRoundTrip: a monetary custom field (v2's
// {"value", "currency"}) reads into a number custom field as its amount;
// an edit of it in the app is written back in the documented shape, in
// the person's own currency (or the currency setting for a person without
// one), not refused as a bare number; the forward pass that follows sees
// its own writes, so a resync never brings the old amount back.
func TestPipedriveMonetaryRoundTrip(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{CustomFields: []pipedriveemu.CustomField{{Name: "Seats budget", Type: "monetary"}}})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	key := srv.CustomFields()[0].Key
	usd := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace", Custom: map[string]any{key: pipedriveemu.Money{Value: 1200, Currency: "USD"}}})
	none := srv.Add(pipedriveemu.Person{Name: "Alan Turing"})
	srv.Advance(time.Second)

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "custom.seats": {From: "custom_fields." + key},
	})
	m.SetCustomFieldTypes(e.ws)
	set := pipedrive.NewSettings()
	set.APIToken, set.BaseURL, set.RateLimit, set.Lookback, set.Currency = connector.Secret(srv.Token()), srv.URL, 100000, 0, "GBP"
	src, err := pipedrive.Open(context.Background(), connector.Options{Name: "pd", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	src.SetClock(srv.Now)
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, pipedrive.TypeName, src, &Target{
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both}, 2)
	byExt := map[string]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		byExt[*c.ExternalID] = c
	}
	// The amount as the emulator holds a number: 1200 in the typed form,
	// ["1200"] in the arrays form (SYNCD_TEST_CUSTOM_FIELD_VALUES).
	amount := func(n string) string {
		if emulator.TestCustomFieldValues() == workspace.ValuesArrays {
			return `["` + n + `"]`
		}
		return n
	}
	if got := e.rawFields(byExt[usd].ID)["seats"]; got != amount("1200") {
		t.Errorf("the amount read into the workspace: %s, want %s", got, amount("1200"))
	}
	for _, id := range []string{usd, none} {
		v, err := workspace.EncodeValue(workspace.FieldNumber, "", []string{"4321"})
		if err != nil {
			t.Fatal(err)
		}
		e.appPatch(byExt[id].ID, workspace.ContactPatch{CustomFields: []workspace.CustomFieldValue{{Key: "seats", Value: v}}})
	}
	srv.Advance(time.Second)
	if q, err := crm.applier.CatchUp(context.Background(), "pd"); err != nil || q != 2 {
		t.Fatalf("catch-up queued %d, %v", q, err)
	}
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Stats().Responses[pipedriveemu.RouteUpdatePerson][400]; n != 0 {
		t.Errorf("%d PATCHes refused", n)
	}
	for id, want := range map[string]pipedriveemu.Money{usd: {Value: 4321, Currency: "USD"}, none: {Value: 4321, Currency: "GBP"}} {
		if p, _ := srv.Get(id); p.Custom[key] != want {
			t.Errorf("person %s's budget %#v, want %#v", id, p.Custom[key], want)
		}
	}
	srv.Advance(time.Second)
	if sum := crm.forward(); sum.Updated != 0 {
		t.Errorf("forward pass after the write-back: %v, want syncd's own writes recognised", sum)
	}
	if got := e.rawFields(byExt[usd].ID)["seats"]; got != amount("4321") {
		t.Errorf("the workspace's amount after the forward pass: %s, want %s", got, amount("4321"))
	}
}

// TestPipedriveRefusedCreateIsOneDeadLetter: a contact made in the app
// that Pipedrive refuses with a definite answer (a 400) is sent once and
// becomes one dead letter naming Pipedrive's message, not retried.
func TestPipedriveRefusedCreateIsOneDeadLetter(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	srv.Add(pipedriveemu.Person{Name: "Ada Lovelace"})
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
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both, OnWorkspaceCreate: "create"}, 1)
	srv.Inject(pipedriveemu.RouteAddPerson, pipedriveemu.Fault{Status: http.StatusBadRequest})
	c := e.appCreate("Nora", "New", "nora@example.com")
	e.event("ev-nora", workspace.EventContactUpdated, c)
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteAddPerson]; n != 1 {
		t.Errorf("%d POSTs, want the refused create sent once", n)
	}
	dls, _ := e.store.DeadLetters.List("pd")
	if len(dls) != 1 || !strings.Contains(dls[0].Reason, "Bad Request") || !strings.Contains(dls[0].Reason, "400") {
		t.Errorf("dead letters %+v, want one naming Pipedrive's 400 and its message", dls)
	}
	if len(srv.Persons()) != 1 {
		t.Errorf("%d persons, want the refused one not made", len(srv.Persons()))
	}
}

// TestPipedriveBurstySearchesAreNotTheDailyBudget: company edits of 12
// contacts, each a search for the organization (Pipedrive's Search API
// allows 10 per 2 s), made while another integration on the token has
// just spent the search window: every edit is written in one drain, the
// searches wait for their window, and nothing stops for the day.
func TestPipedriveBurstySearchesAreNotTheDailyBudget(t *testing.T) {
	const n = 12
	srv := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 100, DailyTokens: 1 << 20})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	for i := range n {
		srv.Add(pipedriveemu.Person{Name: fmt.Sprintf("First%d Last%d", i, i)})
	}
	srv.Advance(time.Second)
	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "company": {From: "org_name"},
	})
	set := pipedrive.NewSettings()
	set.APIToken, set.BaseURL, set.RateLimit, set.Lookback = connector.Secret(srv.Token()), srv.URL, 100, 0
	src, err := pipedrive.Open(context.Background(), connector.Options{Name: "pd", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	src.SetClock(srv.Now)
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, pipedrive.TypeName, src, &Target{
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both}, n)
	for i, c := range e.emu.Contacts() {
		e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Company: workspace.Some(fmt.Sprint("Org ", i))}})
	}
	srv.Advance(time.Second)
	if q, err := crm.applier.CatchUp(context.Background(), "pd"); err != nil || q != n {
		t.Fatalf("catch-up queued %d, %v", q, err)
	}
	for range pipedriveemu.DefaultSearchLimit { // another integration spends the search window
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v2/organizations/search?term=x&exact_match=true", nil)
		req.Header.Set("x-api-token", srv.Token())
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
	start := time.Now()
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatalf("drain: %v", err)
	}
	st := srv.Stats()
	t.Logf("%d company edits in %s, %d searches answered 429", n, time.Since(start).Round(time.Millisecond), st.Responses[pipedriveemu.RouteSearchOrgs][http.StatusTooManyRequests])
	for _, p := range srv.Persons() {
		if p.OrgID == 0 {
			t.Errorf("person %s has no organization: its edit was not written", p.ID)
		}
	}
	if dls, _ := e.store.DeadLetters.List("pd"); len(dls) != 0 {
		t.Errorf("dead letters %+v", dls)
	}
}
