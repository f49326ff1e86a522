package reverse

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/connector/pipedrive"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// TestHubSpotBadPhonesSyncWithoutThemAndStayAtTheSource runs the phones
// users type in HubSpot's phone property (issue 22) through the HubSpot
// connector and its test server, both ways: each record is created with
// its other fields, each bad phone is recorded once as a field warning,
// and later workspace edits (of another field, or of the phone itself)
// never write over the phone's text in HubSpot.
func TestHubSpotBadPhonesSyncWithoutThemAndStayAtTheSource(t *testing.T) {
	srv := hubspotemu.NewServer(hubspotemu.Options{SearchPerSecond: -1})
	t.Cleanup(srv.Close)
	people := []struct {
		name, phone string
		want        string // the contact's phone; "" none, with a warning
		why         string // what the warning says
	}{
		{name: "na", phone: "n/a", why: "not a phone number"},
		{name: "berlin", phone: "0049 30 1234567", why: "00 is not the international prefix in US"},
		{name: "local", phone: "555-0100", why: "only possible as a local number"},
		{name: "valid", phone: "+1 415 555 0100", want: "+14155550100"},
		{name: "extension", phone: "(415) 555-0101 ext. 7", want: "+14155550101"},
		{name: "blank", phone: ""},
	}
	ids := map[string]string{} // name -> HubSpot id
	for _, p := range people {
		props := map[string]string{"email": p.name + "@example.com", "firstname": strings.ToUpper(p.name[:1]) + p.name[1:], "lastname": "Before"}
		if p.phone != "" {
			props["phone"] = p.phone
		}
		ids[p.name] = srv.Add(props)
	}
	time.Sleep(20 * time.Millisecond) // the connector opens its read windows on its own clock

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "firstname"}, "lastName": {From: "lastname"}, "emails.work": {From: "email"},
		"phoneNumbers.mobile": {From: "phone", Region: "US"},
	})
	set := hubspot.NewSettings()
	set.Token, set.BaseURL, set.RateLimit, set.Lookback = hubspot.Secret(srv.Token()), srv.URL, 100000, 0
	typ, _ := connector.Lookup(hubspot.TypeName)
	src, err := typ.Open(context.Background(), connector.Options{Name: "crm", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	crm := e.syncCRM(t, hubspot.TypeName, src, &Target{
		Name: "crm", Source: "custom-hubspot", Mapper: m, Writer: src.(connector.Writer), Direction: mapping.Both}, len(people))

	contacts := map[string]workspace.Contact{} // by HubSpot id
	for _, c := range e.emu.Contacts() {
		contacts[*c.ExternalID] = c
	}
	warnings, err := e.store.FieldWarnings.List("crm")
	if err != nil {
		t.Fatal(err)
	}
	warned := map[string]string{} // HubSpot id -> reason
	for _, w := range warnings {
		if w.Field != "phoneNumbers.mobile" || w.From != "phone" {
			t.Errorf("warning %+v: want field phoneNumbers.mobile from phone", w)
		}
		warned[w.Key] = w.Reason
	}
	for _, p := range people {
		c, ok := contacts[ids[p.name]]
		if !ok {
			t.Fatalf("%s: no contact; the record must sync without its bad phone", p.name)
		}
		if deref(c.DefaultFields.FirstName) == "" || deref(c.DefaultFields.LastName) != "Before" || len(c.DefaultFields.Emails) != 1 {
			t.Errorf("%s: contact %+v lacks its other fields", p.name, c.DefaultFields)
		}
		var got string
		if ph := c.DefaultFields.PhoneNumbers; len(ph) > 0 {
			got = ph[0].Value
		}
		if got != p.want {
			t.Errorf("%s: phone %q, want %q", p.name, got, p.want)
		}
		if reason := warned[ids[p.name]]; (p.why == "") != (reason == "") || !strings.Contains(reason, p.why) {
			t.Errorf("%s: warning %q, want one saying %q", p.name, reason, p.why)
		}
	}
	if len(warnings) != 3 {
		t.Fatalf("%d warnings, want 3: %+v", len(warnings), warnings)
	}

	// A workspace edit of another field goes back; the phone's text stays.
	na, berlin := contacts[ids["na"]], contacts[ids["berlin"]]
	e.appPatch(na.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("After")}})
	// Someone types a phone into the app for the other: the source's
	// text is not overwritten either (the fix belongs at the source).
	e.appPatch(berlin.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{
		LastName: workspace.Some("After"), PhoneNumbers: []workspace.ItemPatch{{Name: "mobile", Value: ptr("+14155550199")}}}})
	if _, err := crm.applier.CatchUp(context.Background(), "crm"); err != nil {
		t.Fatal(err)
	}
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"na", "berlin"} {
		hc, _ := srv.Contact(ids[name])
		if hc.Properties["lastname"] != "After" {
			t.Errorf("%s: HubSpot lastname %q, want the workspace's edit", name, hc.Properties["lastname"])
		}
		if want := people[map[string]int{"na": 0, "berlin": 1}[name]].phone; hc.Properties["phone"] != want {
			t.Errorf("%s: HubSpot phone %q, want the source's text %q kept", name, hc.Properties["phone"], want)
		}
	}

	// The next forward pass writes nothing to the workspace, and the
	// warnings stand unchanged, not reported anew.
	time.Sleep(20 * time.Millisecond)
	patches := e.patches()
	if sum := crm.forward(); sum.Failed != 0 || e.patches() != patches {
		t.Fatalf("forward pass after the write-back: %v, %d PATCHes", sum, e.patches()-patches)
	}
	again, _ := e.store.FieldWarnings.List("crm")
	if len(again) != 3 {
		t.Fatalf("%d warnings after another pass, want the same 3", len(again))
	}
	for i := range again {
		if !again[i].CreatedAt.Equal(warnings[i].CreatedAt) {
			t.Errorf("warning %s reported anew on an unchanged record", again[i].Key)
		}
	}

	// Fixed at the source, the phone reaches the workspace and its
	// warning goes.
	if err := srv.Update(ids["na"], map[string]string{"phone": "+1 212 555 0100"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	crm.forward()
	if c := e.contactByExt(ids["na"]); len(c.DefaultFields.PhoneNumbers) != 1 || c.DefaultFields.PhoneNumbers[0].Value != "+12125550100" {
		t.Fatalf("after the fix, phones %+v, want +12125550100", c.DefaultFields.PhoneNumbers)
	}
	if left, _ := e.store.FieldWarnings.Of("crm", ids["na"]); len(left) != 0 {
		t.Fatalf("warnings %+v left after the fix", left)
	}
}

// contactByExt returns the emulator's contact of an externalId.
func (e *env) contactByExt(ext string) workspace.Contact {
	e.t.Helper()
	for _, c := range e.emu.Contacts() {
		if c.ExternalID != nil && *c.ExternalID == ext {
			return c
		}
	}
	e.t.Fatalf("no contact with externalId %s", ext)
	return workspace.Contact{}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestPipedriveBadPhoneItemStaysWhileAnotherIsWritten: a Pipedrive person
// whose mobile item reads "n/a" syncs without it; a workspace edit of the
// work phone and the last name goes back, and the mobile item's text
// stays as typed, in the phones list Pipedrive takes whole, even when a
// mobile number is typed into the app.
func TestPipedriveBadPhoneItemStaysWhileAnotherIsWritten(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	id := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace", Emails: []pipedriveemu.Item{{Value: "ada@example.com", Label: "work"}},
		Phones: []pipedriveemu.Item{{Value: "n/a", Label: "mobile", Primary: true}, {Value: "+1 415 555 0100", Label: "work"}}})
	srv.Advance(time.Second)

	e := newEnv(t, nil)
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "emails.work": {From: "emails.work"},
		"phoneNumbers.mobile": {From: "phones.mobile"}, "phoneNumbers.work": {From: "phones.work"},
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
		Name: "pd", Source: "custom-pipedrive", Mapper: m, Writer: src, Direction: mapping.Both}, 1)

	c := e.contactByExt(id)
	if ph := c.DefaultFields.PhoneNumbers; len(ph) != 1 || ph[0].Name != "work" || ph[0].Value != "+14155550100" {
		t.Fatalf("contact phones %+v, want only the work number", ph)
	}
	if ws, _ := e.store.FieldWarnings.List("pd"); len(ws) != 1 || ws[0].Field != "phoneNumbers.mobile" || ws[0].Value != "n/a" {
		t.Fatalf("warnings %+v, want the mobile's n/a", ws)
	}
	// Someone also types a mobile number into the app: the source's text
	// for it stays all the same (the fix belongs at the source).
	v, mobile := "+12125550100", "+13105550100"
	e.appPatch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{LastName: workspace.Some("King"),
		PhoneNumbers: []workspace.ItemPatch{{ID: c.DefaultFields.PhoneNumbers[0].ID, Name: "work", Value: &v}, {Name: "mobile", Value: &mobile}}}})
	srv.Advance(time.Second)
	if _, err := crm.applier.CatchUp(context.Background(), "pd"); err != nil {
		t.Fatal(err)
	}
	if err := crm.applier.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, _ := srv.Get(id)
	phones := map[string]string{}
	for _, it := range p.Phones {
		phones[it.Label] = it.Value
	}
	if !strings.HasSuffix(p.Name, "King") || phones["work"] != "+12125550100" || phones["mobile"] != "n/a" {
		t.Fatalf("Pipedrive person %q phones %v, want the edits written and the mobile's n/a kept", p.Name, phones)
	}
}

// TestMergeUpdateKeepsWarnedPhone: a phone target whose record value did
// not map is never written back, whether the record is read now or not
// (then the warning the last pass recorded tells); a phone fixed at the
// source is written back as any field.
func TestMergeUpdateKeepsWarnedPhone(t *testing.T) {
	m := twoWayMapping(t, map[string]mapping.FieldSpec{
		"firstName": {From: "first_name"}, "lastName": {From: "last_name"}, "phoneNumbers.mobile": {From: "mobile"},
	})
	record := func(mobile string) *connector.Record {
		return &connector.Record{ID: "1", Fields: map[string]any{"first_name": "Ada", "last_name": "Lovelace", "mobile": mobile}}
	}
	tests := []struct {
		name      string
		rec       *connector.Record
		warned    bool // the last pass recorded a warning on phoneNumbers.mobile
		wantWrite map[string]any
	}{
		{name: "record read: n/a stays", rec: record("n/a"), wantWrite: map[string]any{"last_name": "King"}},
		{name: "record read: 555-0100 stays", rec: record("555-0100"), wantWrite: map[string]any{"last_name": "King"}},
		{name: "record not readable, warned: stays", rec: nil, warned: true, wantWrite: map[string]any{"last_name": "King"}},
		{name: "record read and fixed since: the phone is written", rec: record("+1 415 555 0100"), warned: true,
			wantWrite: map[string]any{"last_name": "King", "mobile": "+12125550100"}},
		{name: "record not readable, no warning: the phone is written", rec: nil,
			wantWrite: map[string]any{"last_name": "King", "mobile": "+12125550100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := &Target{Name: "mem", Mapper: m, Direction: mapping.Both}
			u := &update{g: &group{contactID: "CT1", link: &state.Link{ExternalID: "1"}, contact: workspace.Contact{ID: "CT1"}},
				ws:   mapping.Fields{"firstName": "Ada", "lastName": "King", "phoneNumbers.mobile": "+12125550100"},
				base: mapping.Fields{"firstName": "Ada", "lastName": "Lovelace"}, changed: []string{"lastName", "phoneNumbers.mobile"}, recordID: "1"}
			if tt.warned {
				u.warned = map[string]bool{"phoneNumbers.mobile": true}
			}
			got := mergeUpdate(tg, u, tt.rec)
			fields, err := m.RecordChanges(got.cur, got.want)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(fields) != fmt.Sprint(tt.wantWrite) {
				t.Fatalf("write-back %v, want %v", fields, tt.wantWrite)
			}
			if _, kept := tt.wantWrite["mobile"]; !kept && got.agreed["phoneNumbers.mobile"] != "" {
				t.Errorf("agreed phone %q: a value never written must not be taken as agreed", got.agreed["phoneNumbers.mobile"])
			}
		})
	}
}
