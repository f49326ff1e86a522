package webhook

import (
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// TestTypedCustomFieldValuesAccepted: a delivery whose contact carries
// custom field values in the published document's typed shapes (a
// boolean, a number, a date-time, a string, an array for multi-select,
// null) is a valid contact: accepted and kept in the inbox as it came.
func TestTypedCustomFieldValuesAccepted(t *testing.T) {
	f := newFixture(t, nil)
	putSecret(t, f.store, secret, now, time.Time{})
	at := now.Add(-time.Minute).Truncate(time.Millisecond).Format(time.RFC3339Nano)
	body := []byte(`{"id":"EV1","apiVersion":"` + workspace.DefaultVersion + `","createdAt":"` + at + `","type":"contact.updated","data":{"resource":{` +
		`"id":"C1","externalId":"1","source":"custom-crm","sourceUrl":null,` +
		`"defaultFields":{"firstName":"Ann","lastName":null,"company":null,"role":null,"emails":[],"phoneNumbers":[]},` +
		`"customFields":[` +
		`{"name":"VIP","key":"vip","id":"CF1","type":"boolean","value":true},` +
		`{"name":"Seats","key":"seats","id":"CF2","type":"number","value":12.5},` +
		`{"name":"Renewal","key":"renewal","id":"CF3","type":"date","value":"2026-01-31T00:00:00.000Z"},` +
		`{"name":"Plan","key":"plan","id":"CF4","type":"string","value":"gold"},` +
		`{"name":"Tags","key":"tags","id":"CF5","type":"multi-select","value":["a","b"]},` +
		`{"name":"Office","key":"office","id":"CF6","type":"address","value":null}],` +
		`"createdAt":"` + at + `","updatedAt":"` + at + `","createdByUserId":"US1"}}}`)
	status, ans := f.post(t, signed(t, secret, "msg_typed", now, body), body)
	if status != 200 || !strings.Contains(ans, "accepted") {
		t.Fatalf("typed delivery: %d %s", status, ans)
	}
	evs := f.inbox(t)
	if len(evs) != 1 || evs[0].ContactID != "C1" || string(evs[0].Body) != string(body) {
		t.Fatalf("inbox %+v, want the delivery of C1 as it came", evs)
	}
}
