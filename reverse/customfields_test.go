package reverse

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// testCustomFields are the workspace's custom fields in these tests: one
// of each type.
var testCustomFields = []workspace.CustomFieldDefinition{
	{Name: "Office", Key: "office", Type: workspace.FieldAddress},
	{Name: "VIP", Key: "vip", Type: workspace.FieldBoolean},
	{Name: "Renewal", Key: "renewal", Type: workspace.FieldDate},
	{Name: "Tags", Key: "tags", Type: workspace.FieldMultiSelect},
	{Name: "Seats", Key: "seats", Type: workspace.FieldNumber},
	{Name: "Plan", Key: "plan", Type: workspace.FieldString},
	{Name: "Website", Key: "site", Type: workspace.FieldURL},
}

// customSpec maps every custom field both ways.
var customSpec = mapping.Spec{
	ExternalID: "id",
	Fields: map[string]mapping.FieldSpec{
		"firstName":      {From: "first_name"},
		"custom.office":  {From: "office"},
		"custom.vip":     {From: "vip"},
		"custom.renewal": {From: "renewal"},
		"custom.tags":    {From: "tags", Transform: []string{"split:;"}},
		"custom.seats":   {From: "seats"},
		"custom.plan":    {From: "plan"},
		"custom.site":    {From: "site"},
	},
}

// rawFields returns each custom field's value of contact id as the API
// answers it (raw JSON), by key.
func (e *env) rawFields(id string) map[string]string {
	e.t.Helper()
	c, err := e.ws.GetContact(e.t.Context(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range c.CustomFields {
		b, _ := json.Marshal(f.Value)
		out[f.Key] = string(b)
	}
	return out
}

// deliver posts body to the receiver as the workspace does, signed with
// the subscription's secret, and waits for it to be accepted.
func (e *env) deliver(id string, body []byte) {
	e.t.Helper()
	sec, _, err := e.store.Webhooks.Secrets()
	if err != nil {
		e.t.Fatal(err)
	}
	h, err := signature.SignHeaders(sec.Secret, id, time.Now(), body)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.hook.URL, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	ans, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(ans), "accepted") {
		e.t.Fatalf("delivery %s: %d %s", id, resp.StatusCode, ans)
	}
}

// TestCustomFieldRoundTrip takes a value of every custom field type from a
// record to the workspace (in the emulator's form), back unchanged at no
// cost, then an edit made in the app back to the record, whose echo costs
// no write, then clears every field; and applies an event carrying the
// published document's typed values whatever the emulator's form. CI runs
// it in both forms (SYNCD_TEST_CUSTOM_FIELD_VALUES).
func TestCustomFieldRoundTrip(t *testing.T) {
	e, id, form := customFieldEnv(t)
	customUnchangedInOtherWords(t, e)
	customAppEdit(t, e, id, form)
	customTypedDelivery(t, e)
	customClearing(t, e, id)
}

// customFieldEnv syncs a record with a value of every custom field type
// to the workspace and checks the contact holds them in the emulator's
// form; it returns the contact's id and that form.
func customFieldEnv(t *testing.T) (*env, string, string) {
	form := emulator.TestCustomFieldValues()
	e := newEnv(t, nil)
	m, err := mapping.Compile(customSpec, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.SetCustomFieldTypes(e.ws)
	e.mapper, e.target.Mapper = m, m
	e.newApplier()
	e.listen()

	rec := map[string]any{"id": "1", "first_name": "Ann", "office": "1 Main St", "vip": "yes", "renewal": "2023-01-02",
		"tags": "gold;b2b", "seats": "43.0", "plan": " basic ", "site": "https://ann.example"}
	e.mem.put("1", rec)
	if sum := e.forward(); sum.Created != 1 {
		t.Fatalf("forward: %v, want 1 create", sum)
	}
	id := e.link("1").ContactID
	want := map[string]string{"office": `"1 Main St"`, "vip": `true`, "renewal": `"2023-01-02T00:00:00.000Z"`,
		"tags": `["b2b","gold"]`, "seats": `43`, "plan": `"basic"`, "site": `"https://ann.example"`}
	if form == workspace.ValuesArrays {
		want = map[string]string{"office": `["1 Main St"]`, "vip": `["true"]`, "renewal": `["2023-01-02T00:00:00.000Z"]`,
			"tags": `["b2b","gold"]`, "seats": `["43"]`, "plan": `["basic"]`, "site": `["https://ann.example"]`}
	}
	if got := e.rawFields(id); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s form: the workspace holds %v, want %v", form, got, want)
	}
	// The contact's own create event comes back: an echo, nothing written.
	e.waitDelivered()
	e.drain()

	return e, id, form
}

// customUnchangedInOtherWords: a record rewritten with the same data in
// other words costs no write.
func customUnchangedInOtherWords(t *testing.T, e *env) {
	// The record rewritten with the same data in other words (yes/TRUE,
	// 43.0/43): its values compare equal to the contact's, so no write.
	e.mem.put("1", map[string]any{"vip": "TRUE", "seats": "43"})
	before := e.emu.Stats()
	if sum := e.forward(); sum.Unchanged != 1 || sum.Updated != 0 {
		t.Fatalf("unchanged record: %v, want it unchanged", sum)
	}
	if after := e.emu.Stats(); after.Requests["PATCH /v1/contacts/{id}"] != before.Requests["PATCH /v1/contacts/{id}"] {
		t.Fatalf("an unchanged record was written: %v", after.Requests)
	}
}

// customAppEdit: an edit in the app reaches the record in one write, and
// does not echo back.
func customAppEdit(t *testing.T, e *env, id, form string) {
	// An edit in the app, in the form of the emulator, reaches the record.
	edit := func(key string, vals ...string) workspace.CustomFieldValue {
		var typ string
		for _, d := range testCustomFields {
			if d.Key == key {
				typ = d.Type
			}
		}
		v, err := workspace.EncodeValue(typ, form, vals)
		if err != nil {
			t.Fatal(err)
		}
		return workspace.CustomFieldValue{Key: key, Value: v}
	}
	calls, _ := e.mem.writes()
	e.appPatch(id, workspace.ContactPatch{CustomFields: []workspace.CustomFieldValue{
		edit("office", "2 High St"), edit("vip", "false"), edit("renewal", "2024-05-06"), edit("tags", "silver"),
		edit("seats", "7.5"), edit("plan", "pro"), edit("site", "https://ann.example/new")}})
	e.waitDelivered()
	e.drain()
	got := e.mem.get("1").Fields
	wantRec := map[string]any{"office": "2 High St", "vip": "false", "renewal": "2024-05-06", "tags": "silver",
		"seats": "7.5", "plan": "pro", "site": "https://ann.example/new"}
	for k, v := range wantRec {
		if got[k] != v {
			t.Errorf("record %s = %#v, want %#v", k, got[k], v)
		}
	}
	if n, _ := e.mem.writes(); n != calls+1 {
		t.Fatalf("%d record writes for one app edit, want 1", n-calls)
	}
	// The record now changed by syncd: the next forward pass finds it
	// equal to the contact (no echo written back).
	before := e.emu.Stats()
	e.forward()
	if after := e.emu.Stats(); after.Requests["PATCH /v1/contacts/{id}"] != before.Requests["PATCH /v1/contacts/{id}"] {
		t.Fatalf("the reverse write echoed back to the workspace: %v", after.Requests)
	}
}

// customTypedDelivery: the published document's typed values are applied.
func customTypedDelivery(t *testing.T, e *env) {
	// A delivery carrying the published document's typed values is
	// accepted by the receiver and applied, whatever the emulator's form.
	c := e.contact("1")
	typed := map[string]workspace.FieldValue{"office": workspace.StringValue("3 Low Rd"), "vip": workspace.BoolValue(true),
		"renewal": workspace.StringValue("2025-02-03T00:00:00.000Z"), "tags": workspace.ListValue([]string{"x", "y"}),
		"seats": workspace.NumberValue(12), "plan": workspace.StringValue("team"), "site": workspace.StringValue("https://t.example")}
	for i, f := range c.CustomFields {
		c.CustomFields[i].Value = typed[f.Key]
	}
	c.UpdatedAt = c.UpdatedAt.Add(time.Second)
	e.deliver("typed-1", eventBody(t, "typed-1", workspace.EventContactUpdated, c))
	e.drain()
	got := e.mem.get("1").Fields
	wantRec := map[string]any{"office": "3 Low Rd", "vip": "true", "renewal": "2025-02-03", "tags": "x;y",
		"seats": "12", "plan": "team", "site": "https://t.example"}
	for k, v := range wantRec {
		if got[k] != v {
			t.Errorf("after a typed event: record %s = %#v, want %#v", k, got[k], v)
		}
	}
}

// customClearing: fields cleared at the source are cleared in the
// workspace.
func customClearing(t *testing.T, e *env, id string) {
	// Clearing every field at the source clears them in the workspace
	// (null in the typed form, [] in the arrays form).
	e.mem.put("1", map[string]any{"office": nil, "vip": nil, "renewal": nil, "tags": nil, "seats": nil, "plan": "", "site": nil})
	if sum := e.forward(); sum.Updated != 1 {
		t.Fatalf("clearing: %v, want 1 update", sum)
	}
	if got := e.rawFields(id); len(got) != 0 {
		t.Fatalf("after clearing, the workspace holds %v", got)
	}
}
